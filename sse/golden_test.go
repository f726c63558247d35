package sse_test

import "flag"

// update rewrites the golden files and the committed fuzz corpus.
var update = flag.Bool("update", false, "rewrite the golden files under testdata")
