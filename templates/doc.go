// Package templates holds the non-Go sources capguard ships and embeds: the
// Python persistent-buffer helper the fixer inserts, the Python harness of
// `capguard verify`, and the CUDA C kernels (with their committed PTX) of the
// runtime self-test. Each family is embedded from its own file.
package templates
