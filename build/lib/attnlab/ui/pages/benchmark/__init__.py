"""The Benchmark page (/benchmark): our paths against every SDPA backend, live and recorded."""
