// Package pipeline holds no code of its own: each stage is one package
// below it, in data-flow order
//
//	capture → dedup → plan-retries (plan) → fetch → merge → export
//
// with status (a read-only report on a dataset) and schedule (the retry
// policy the scheduling stages share). What stages share beyond that sits
// under formats/ (wire and file formats, dataset layout) or internal/, and
// test harnesses and generators under tools/, so that a stage's folder
// holds the stage and nothing else (layout_test.go checks it).
package pipeline
