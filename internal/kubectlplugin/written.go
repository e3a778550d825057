package kubectlplugin

import (
	"encoding/json"
	"fmt"
	"strings"
)

// writtenBy tells which runtime a state looks written by. Both write the
// same format and call their version field terraform_version; the provider
// addresses of the resources name the registry each runtime resolves
// hashicorp/<type> against, and only Terraform splits a state into pieces.
func writtenBy(raw []byte, secrets int) string {
	var s struct {
		Version   string `json:"terraform_version"`
		Resources []struct {
			Provider string `json:"provider"`
		} `json:"resources"`
	}
	if json.Unmarshal(raw, &s) != nil {
		return "unknown"
	}
	runtime := "unknown runtime"
	for _, r := range s.Resources {
		switch {
		case strings.Contains(r.Provider, "registry.opentofu.org/"):
			runtime = "OpenTofu"
		case strings.Contains(r.Provider, "registry.terraform.io/"):
			runtime = "Terraform"
		}
	}
	if runtime == "unknown runtime" && secrets > 1 {
		runtime = "Terraform"
	}
	return fmt.Sprintf("%s %s", runtime, s.Version)
}
