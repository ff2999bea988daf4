module github.com/zkcoord/zkcoord/kerberos

go 1.24

require (
	github.com/jcmturner/gokrb5/v8 v8.4.4
	github.com/zkcoord/zkcoord v0.0.0
	go.uber.org/goleak v1.3.0
)

require (
	github.com/google/uuid v1.6.0 // indirect
	github.com/hashicorp/go-uuid v1.0.3 // indirect
	github.com/jcmturner/aescts/v2 v2.0.0 // indirect
	github.com/jcmturner/dnsutils/v2 v2.0.0 // indirect
	github.com/jcmturner/gofork v1.7.6 // indirect
	github.com/jcmturner/rpc/v2 v2.0.3 // indirect
	golang.org/x/crypto v0.31.0 // indirect
	golang.org/x/net v0.33.0 // indirect
)

// Built from the same checkout as the library it plugs into.
replace github.com/zkcoord/zkcoord => ../
