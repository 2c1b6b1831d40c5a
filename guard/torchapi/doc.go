// Package torchapi is capguard's knowledge of torch and Triton, the bottom
// layer every other imports: each table of torch names the analysis tells
// apart (allocators, host reads, views, dtype conversions, metadata
// methods...), one copy each. A table of framework names belongs here, not
// in the layer that reads it.
package torchapi
