module github.com/zkcoord/zkcoord/metrics/prom

go 1.24

require (
	github.com/prometheus/client_golang v1.21.1
	github.com/zkcoord/zkcoord v0.0.0
)

require (
	github.com/beorn7/perks v1.0.1 // indirect
	github.com/cespare/xxhash/v2 v2.3.0 // indirect
	github.com/google/uuid v1.6.0 // indirect
	github.com/klauspost/compress v1.17.11 // indirect
	github.com/munnerz/goautoneg v0.0.0-20191010083416-a7dc8b61c822 // indirect
	github.com/prometheus/client_model v0.6.1 // indirect
	github.com/prometheus/common v0.62.0 // indirect
	github.com/prometheus/procfs v0.15.1 // indirect
	golang.org/x/sys v0.34.0 // indirect
	google.golang.org/protobuf v1.36.1 // indirect
)

// Built from the same checkout as the library it adapts.
replace github.com/zkcoord/zkcoord => ../../
