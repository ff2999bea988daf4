module github.com/zkcoord/zkcoord

go 1.24

require (
	github.com/google/uuid v1.6.0
	go.uber.org/goleak v1.3.0
	golang.org/x/sys v0.34.0
)

require github.com/stretchr/testify v1.10.0 // indirect
