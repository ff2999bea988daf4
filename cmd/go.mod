module github.com/zkcoord/zkcoord/cmd

go 1.24

require (
	github.com/chromedp/cdproto v0.0.0-20250724212937-08a3db8b4327
	github.com/chromedp/chromedp v0.14.2
	github.com/google/uuid v1.6.0
	github.com/prometheus/client_golang v1.21.1
	github.com/spf13/cobra v1.9.1
	github.com/spf13/pflag v1.0.7
	github.com/zkcoord/zkcoord v0.0.0
	github.com/zkcoord/zkcoord/kerberos v0.0.0
	github.com/zkcoord/zkcoord/metrics/prom v0.0.0
	golang.org/x/sys v0.34.0
	golang.org/x/term v0.30.0
)

require (
	github.com/beorn7/perks v1.0.1 // indirect
	github.com/cespare/xxhash/v2 v2.3.0 // indirect
	github.com/chromedp/sysutil v1.1.0 // indirect
	github.com/go-json-experiment/json v0.0.0-20250725192818-e39067aee2d2 // indirect
	github.com/gobwas/httphead v0.1.0 // indirect
	github.com/gobwas/pool v0.2.1 // indirect
	github.com/gobwas/ws v1.4.0 // indirect
	github.com/hashicorp/go-uuid v1.0.3 // indirect
	github.com/inconshreveable/mousetrap v1.1.0 // indirect
	github.com/jcmturner/aescts/v2 v2.0.0 // indirect
	github.com/jcmturner/dnsutils/v2 v2.0.0 // indirect
	github.com/jcmturner/gofork v1.7.6 // indirect
	github.com/jcmturner/gokrb5/v8 v8.4.4 // indirect
	github.com/jcmturner/rpc/v2 v2.0.3 // indirect
	github.com/klauspost/compress v1.17.11 // indirect
	github.com/munnerz/goautoneg v0.0.0-20191010083416-a7dc8b61c822 // indirect
	github.com/prometheus/client_model v0.6.1 // indirect
	github.com/prometheus/common v0.62.0 // indirect
	github.com/prometheus/procfs v0.15.1 // indirect
	go.uber.org/goleak v1.3.0 // indirect
	golang.org/x/crypto v0.31.0 // indirect
	golang.org/x/net v0.33.0 // indirect
	google.golang.org/protobuf v1.36.1 // indirect
)

// The tools are built from the same checkout as the library.
replace (
	github.com/zkcoord/zkcoord => ../
	github.com/zkcoord/zkcoord/kerberos => ../kerberos
	github.com/zkcoord/zkcoord/metrics/prom => ../metrics/prom
)
