package supervise

// RunShimIfAsked does nothing on Windows: a job object, not a shim, ties a
// child's processes to zkcoord.
func RunShimIfAsked() {}
