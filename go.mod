module github.com/zkcoord/zkcoord

go 1.24

require (
	github.com/go-zookeeper/zk v1.0.4
	github.com/google/uuid v1.6.0
)
