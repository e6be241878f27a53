#!/usr/bin/python3
"""Run a few libtorrent DHT nodes on 127.0.0.1 for capture's interop test.

Needs Debian's python3-libtorrent (2.0.8) for /usr/bin/python3:
    apt-get install -y python3-libtorrent

The nodes bootstrap from one another, then announce --hashes random
infohashes (several times, from different nodes, so that the closest
nodes store them and BEP 51 sample_infohashes returns them). When ready
it prints one JSON line on stdout:
    {"nodes": ["127.0.0.1:port", ...], "hashes": ["hex", ...]}
and keeps running until stdin closes, --duration passes, or SIGTERM.
"""
import argparse
import hashlib
import json
import select
import signal
import sys
import time

import libtorrent as lt


def settings():
    return {
        "listen_interfaces": "127.0.0.1:0",
        "enable_dht": True,
        "enable_lsd": False,
        "enable_upnp": False,
        "enable_natpmp": False,
        "dht_bootstrap_nodes": "",
        # Many nodes on one IP: turn off the per-IP routing/search limits
        # and the rate limit that blocks a busy IP.
        "dht_restrict_routing_ips": False,
        "dht_restrict_search_ips": False,
        "dht_enforce_node_id": False,
        "dht_prefer_verified_node_ids": False,
        "dht_ignore_dark_internet": False,
        "dht_block_ratelimit": 100000,
        "dht_upload_rate_limit": 10000000,
        "dht_sample_infohashes_interval": 1,
        # Every torrent active, so that every one announces itself.
        "active_downloads": -1,
        # libtorrent spreads DHT announces of its torrents over this interval.
        "dht_announce_interval": 1,
        "active_seeds": -1,
        "active_limit": -1,
        "active_dht_limit": -1,
        "alert_mask": 0,
    }


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--nodes", type=int, default=8)
    ap.add_argument("--hashes", type=int, default=20)
    ap.add_argument("--seed", default="1")
    ap.add_argument("--duration", type=float, default=120)
    ap.add_argument("--settle", type=float, default=3, help="seconds to let announces land")
    ap.add_argument("--save-path", default="/tmp", help="where torrents would save data (none is downloaded)")
    args = ap.parse_args()
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))

    sessions = [lt.session(settings()) for _ in range(args.nodes)]
    ports = [s.listen_port() for s in sessions]
    for i, s in enumerate(sessions):
        for j, p in enumerate(ports):
            if i != j:
                s.add_dht_node(("127.0.0.1", p))
    # Let the routing tables fill.
    time.sleep(3)
    hashes = [hashlib.sha1(("libtorrentnode-%s-%d" % (args.seed, i)).encode()).digest() for i in range(args.hashes)]
    # Each hash is added as a magnet-style torrent to two sessions: a
    # torrent announces itself to the DHT (get_peers, then announce_peer
    # to the closest nodes), which is how the nodes come to store it.
    for i, h in enumerate(hashes):
        for k in (0, 1):
            atp = lt.add_torrent_params()
            atp.info_hashes = lt.info_hash_t(lt.sha1_hash(h))
            atp.save_path = args.save_path
            sessions[(i + k) % len(sessions)].add_torrent(atp)
    # Lookups only: get_peers traffic for hashes nobody has.
    for i in range(args.hashes):
        h = hashlib.sha1(("libtorrentnode-search-%s-%d" % (args.seed, i)).encode()).digest()
        sessions[i % len(sessions)].dht_get_peers(lt.sha1_hash(h))
    time.sleep(args.settle)
    print(json.dumps({"nodes": ["127.0.0.1:%d" % p for p in ports], "hashes": [h.hex() for h in hashes]}), flush=True)

    end = time.time() + args.duration
    while time.time() < end:
        r, _, _ = select.select([sys.stdin], [], [], 0.5)
        if r and not sys.stdin.read(1):
            break  # stdin closed: the test is done


if __name__ == "__main__":
    main()
