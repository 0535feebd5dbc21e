// Package bench is Hoist's load tool: it drives one GameLift operation over keep-alive HTTP with
// N concurrent clients, closed-loop (as fast as the server answers) or open-loop (a fixed
// request rate), and reports throughput and latency percentiles.
//
// Every run also drives a bare net/http handler, started in-process on 127.0.0.1, with the same
// client code and the same request bytes, so each result is reported as a ratio to that
// baseline measured on the same machine in the same run. Numbers from different machines are
// not comparable; ratios mostly are.
//
// Requests are built once per target and protocol (awsJson1_1 or Smithy RPC v2 CBOR), signed
// once with SigV4 and replayed, so client-side signing and encoding cost does not distort the
// measurement. Latencies go into a fixed-memory log-linear Histogram.
//
// The command-line entry point is Main; docs/benchmarks.md describes how to use it.
package bench
