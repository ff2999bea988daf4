// Package interop runs real peers written against Apache Curator (Java)
// and Kazoo (Python) beside zkcoord in tests, so that interoperability is
// checked against the libraries themselves.
//
// A peer is a small line-oriented program kept in a package's testdata:
// it reads commands from stdin and prints events to stdout, one per line,
// flushing after each. CompileJava builds a Java peer against the Curator
// and ZooKeeper jars installed by Debian's libcurator-recipes-java;
// StartPython runs a Python peer with Debian's python3-kazoo.
package interop
