// The node's sandbox ("pause") image binary: built here so that no image is pulled from a registry.
module driftless.local/local-cluster/pause

go 1.24.0
