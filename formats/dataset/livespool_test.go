package dataset

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/infohash/infohash/formats/fsutil"
)

// A live spool's reader sees each chunk while the source is still open,
// reads the whole input in order, and the file is durable under its final
// name once Wait returns; a source that fails leaves no file, and readers
// get its error after the bytes copied before it.
func TestLiveSpool(t *testing.T) {
	chunks := [][]byte{[]byte("first chunk\n"), bytes.Repeat([]byte("x"), spoolChunk+7), []byte("last\n")}
	var whole []byte
	for _, c := range chunks {
		whole = append(whole, c...)
	}
	for _, tt := range []struct {
		name   string
		srcErr error // how the source ends after the chunks (nil: EOF)
	}{
		{"complete", nil},
		{"source fails", errors.New("pipe broke")},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			pr, pw := io.Pipe()
			var tee bytes.Buffer
			s, err := StartSpool(dir, ".spool", pr, &tee)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			r := s.NewReader(context.Background())
			var got []byte
			for _, c := range chunks {
				go pw.Write(c)
				// The reader gets the chunk before anything more is sent.
				part := make([]byte, len(c))
				read := make(chan error, 1)
				go func() { _, err := io.ReadFull(r, part); read <- err }()
				select {
				case err := <-read:
					if err != nil {
						t.Fatalf("reading a chunk while the source is open: %v", err)
					}
				case <-time.After(30 * time.Second):
					t.Fatal("a chunk sent is not readable before the source ends")
				}
				got = append(got, part...)
			}
			pw.CloseWithError(tt.srcErr)
			rest, rerr := io.ReadAll(r)
			werr := s.Wait(context.Background())
			if len(rest) != 0 || !bytes.Equal(got, whole) {
				t.Fatalf("reader got %d+%d bytes, want %d", len(got), len(rest), len(whole))
			}
			ents, _ := os.ReadDir(dir)
			if tt.srcErr != nil {
				if !errors.Is(rerr, tt.srcErr) || !errors.Is(werr, tt.srcErr) {
					t.Fatalf("reader error %v, Wait %v: want the source's", rerr, werr)
				}
				if len(ents) != 0 {
					t.Fatalf("a failed spool left %v", ents)
				}
				return
			}
			if rerr != nil || werr != nil {
				t.Fatalf("reader error %v, Wait %v", rerr, werr)
			}
			onDisk, err := os.ReadFile(s.Path())
			if err != nil || !bytes.Equal(onDisk, whole) || !bytes.Equal(tee.Bytes(), whole) {
				t.Fatalf("file %d bytes (%v), tee %d bytes: want %d", len(onDisk), err, tee.Len(), len(whole))
			}
			if len(ents) != 1 || filepath.Join(dir, ents[0].Name()) != s.Path() {
				t.Fatalf("dir holds %v; want only %s", ents, s.Path())
			}
			// A reader opened after the end reads the whole file too.
			again, err := io.ReadAll(s.NewReader(context.Background()))
			if err != nil || !bytes.Equal(again, whole) {
				t.Fatalf("a later reader: %d bytes, %v", len(again), err)
			}
		})
	}
}

// Salvage running while spools finish never takes one for a dead
// writer's: a spool that completes between Salvage's open and its lock
// used to be truncated and renamed under its writer.
func TestSalvageSparesFinishingSpools(t *testing.T) {
	stream, _ := arrowBatches(t, 4)
	for _, tt := range []struct {
		name  string
		spool func(dir string) (string, error)
	}{
		{"Spool", func(dir string) (string, error) { return Spool(dir, ".spool", bytes.NewReader(stream)) }},
		{"StartSpool", func(dir string) (string, error) {
			s, err := StartSpool(dir, ".spool", bytes.NewReader(stream), nil)
			if err != nil {
				return "", err
			}
			defer s.Close()
			return s.Path(), s.Wait(context.Background())
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			stop := make(chan struct{})
			salvaged := make(chan error, 1)
			go func() {
				for {
					select {
					case <-stop:
						salvaged <- nil
						return
					default:
					}
					if set, err := Salvage(dir, ".spool"); err != nil || len(set) > 0 {
						salvaged <- fmt.Errorf("Salvage set aside %v: %v", set, err)
						return
					}
				}
			}()
			for range 300 {
				p, err := tt.spool(dir)
				if err != nil {
					t.Fatal(err)
				}
				if got, err := os.ReadFile(p); err != nil || !bytes.Equal(got, stream) {
					t.Fatalf("spool %s: %d bytes of %d, %v", p, len(got), len(stream), err)
				}
				os.Remove(p)
			}
			close(stop)
			if err := <-salvaged; err != nil {
				t.Fatal(err)
			}
		})
	}
}

// Closing a live spool while its copy runs (an interrupted run) stops
// the copy and keeps the spool locked until the copy has ended, however
// long that takes: the lock used to go at once, and another run's
// ClaimLeftover or Salvage could take the spool while the dying run
// still wrote to it. Nothing written before is lost.
func TestLiveSpoolCloseWaitsForCopy(t *testing.T) {
	dir := t.TempDir()
	pr, pw := io.Pipe()
	defer pw.Close()
	tee := &gateWriter{entered: make(chan struct{}, 1), open: make(chan struct{})}
	s, err := StartSpool(dir, ".spool", pr, tee)
	if err != nil {
		t.Fatal(err)
	}
	first := []byte("0123456789abcdef0123456789abcdef\n")
	if _, err := pw.Write(first); err != nil {
		t.Fatal(err)
	}
	<-tee.entered // the copy wrote first to the file and is held in the tee
	temps, err := filepath.Glob(filepath.Join(dir, ".tmp-*"))
	if err != nil || len(temps) != 1 {
		t.Fatalf("temporary spools %v (%v): want one", temps, err)
	}
	temp := temps[0]
	// A second read returns while the copy is held: its bytes have left
	// the pipe, so the stopped spool must still hold them.
	second := []byte("fedcba9876543210fedcba9876543210\n")
	if _, err := pw.Write(second); err != nil {
		t.Fatal(err)
	}
	// Write returns as the source's Read does; the spool counts that
	// read once its goroutine runs again, which a loaded machine delays
	// (the stopped copy then dropped it, and this test failed now and
	// then).
	for s.returned.Load() < 2 {
		time.Sleep(time.Millisecond)
	}
	s.Close()
	if release, ok, err := ClaimLeftover(temp); ok || err != nil {
		if ok {
			release()
		}
		t.Fatalf("ClaimLeftover of a spool still being copied: ok %v, %v; want it held", ok, err)
	}
	close(tee.open)
	// The copy ends although its source stays open and silent.
	if err := s.Wait(context.Background()); err == nil {
		t.Fatal("Wait of a stopped spool: nil error")
	}
	release, ok, err := ClaimLeftover(temp)
	if !ok || err != nil {
		t.Fatalf("ClaimLeftover once the copy ended: ok %v, %v; want it free", ok, err)
	}
	defer release()
	want := append(append([]byte{}, first...), second...)
	if got, err := os.ReadFile(temp); err != nil || !bytes.Equal(got, want) {
		t.Fatalf("the stopped spool holds %q (%v); want %q", got, err, want)
	}
}

// gateWriter tells on entered that a write has begun and holds every
// write until open is closed.
type gateWriter struct {
	entered chan struct{}
	open    chan struct{}
}

func (g *gateWriter) Write(p []byte) (int, error) {
	select {
	case g.entered <- struct{}{}:
	default:
	}
	<-g.open
	return len(p), nil
}

// TestLiveSpoolStopKeepsDurably: Stop, for a run stopping while its
// stream is still open, waits for the stopped copy to end, which makes
// what it wrote durable (its data synced, then its folder) before the
// run exits saying it is kept; an fsync that fails, or a copy that does
// not end in time, is Stop's error. Close alone used to leave the
// temporary file unsynced, and the process exited before the copy ended.
func TestLiveSpoolStopKeepsDurably(t *testing.T) {
	eio := errors.New("input/output error")
	tests := []struct {
		name    string
		syncErr error
		hold    bool   // the copy is held (in its tee) past Stop's wait
		want    string // part of Stop's error; "": nil
	}{
		{"synced", nil, false, ""},
		{"fdatasync fails", eio, false, "input/output error"},
		{"copy held", nil, true, "did not end within 50ms"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var synced []string
			defer func(f func(*fsutil.File) error) { syncStopped = f }(syncStopped)
			syncStopped = func(f *fsutil.File) error {
				synced = append(synced, f.Name())
				return tt.syncErr
			}
			dir := t.TempDir()
			pr, pw := io.Pipe()
			defer pw.Close() // open and silent until the end: a stalled writer
			tee := &gateWriter{entered: make(chan struct{}, 1), open: make(chan struct{})}
			s, err := StartSpool(dir, ".spool", pr, tee)
			if err != nil {
				t.Fatal(err)
			}
			data := []byte("0123456789abcdef0123456789abcdef\n")
			if _, err := pw.Write(data); err != nil {
				t.Fatal(err)
			}
			<-tee.entered // written to the file
			if !tt.hold {
				close(tee.open)
			}
			err = s.Stop(50 * time.Millisecond)
			if tt.hold {
				if len(synced) != 0 {
					t.Errorf("synced %v before the copy ended", synced)
				}
				close(tee.open)
				s.Wait(context.Background())
			}
			if (tt.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tt.want)) {
				t.Errorf("Stop: %v; want an error saying %q (none if empty)", err, tt.want)
			}
			temps, _ := filepath.Glob(filepath.Join(dir, ".tmp-*"))
			if len(temps) != 1 || len(synced) != 1 || synced[0] != temps[0] {
				t.Fatalf("synced %v, temporary spools %v; want the one synced once", synced, temps)
			}
			if tt.syncErr != nil && !strings.Contains(err.Error(), temps[0]) {
				t.Errorf("Stop: %v; want it to name %s", err, temps[0])
			}
			if got, err := os.ReadFile(temps[0]); err != nil || !bytes.Equal(got, data) {
				t.Errorf("the stopped spool holds %q (%v); want %q", got, err, data)
			}
		})
	}
}
