package imagebuild_test

import (
	"archive/tar"
	"context"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"captf.io/captf/internal/imagebuild"
	"captf.io/captf/internal/test/envtest"
)

// A module image as `captf-dev images build` lays it: the base image of
// its runtime as the first layer, then the module at /captf/module
// (without .terraform or state files) and the providers it requires from
// the tool cache's mirror at /captf/providers (under both runtimes'
// registry hosts), owned by 65532, labelled
// with its role; a provider the mirror lacks is an error naming it.
func TestModuleImage(t *testing.T) {
	t.Parallel()
	tools := envtest.RequireTools(t, "tofu", "terraform", "sh")
	module := t.TempDir()
	for name, content := range map[string]string{
		"main.tf":                   `resource "null_resource" "x" {}`,
		"modules/net/main.tf":       `output "id" { value = "net" }`,
		".terraform/providers/junk": "x",
		"terraform.tfstate":         "{}",
		"terraform.tfstate.backup":  "{}",
		".terraform.lock.hcl":       "# lock",
	} {
		p := filepath.Join(module, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ctx := context.Background()
	for _, rt := range []string{"tofu", "terraform"} {
		t.Run(rt, func(t *testing.T) {
			in := imagebuild.ModuleInputs{Module: module, Role: "machine", Runtime: rt, Tools: tools,
				Providers: []string{"hashicorp/null"}, Arch: runtime.GOARCH}
			img, err := imagebuild.BuildModule(ctx, in)
			if err != nil {
				t.Fatal(err)
			}
			layers, err := img.Layers()
			if err != nil || len(layers) != 2 {
				t.Fatalf("%d layers (%v), want the base's and the module's", len(layers), err)
			}
			cf, err := img.ConfigFile()
			if err != nil {
				t.Fatal(err)
			}
			if cf.Config.Labels["io.captf.role"] != "machine" || cf.Config.Labels["io.captf.runtime"] != rt || cf.Config.User != imagebuild.BaseUser {
				t.Errorf("labels %v, user %q: want role machine, runtime %s, user %s", cf.Config.Labels, cf.Config.User, rt, imagebuild.BaseUser)
			}
			files := extract(t, img)
			for _, name := range []string{"captf/module/main.tf", "captf/module/modules/net/main.tf", "captf/module/.terraform.lock.hcl"} {
				if h := files[name]; h == nil || h.Typeflag != tar.TypeReg || h.Uid != 65532 || h.Gid != 65532 {
					t.Errorf("/%s is %+v, want a file owned by 65532", name, h)
				}
			}
			for _, name := range []string{"captf/module/.terraform", "captf/module/terraform.tfstate", "captf/module/terraform.tfstate.backup"} {
				if files[name] != nil {
					t.Errorf("/%s is in the image", name)
				}
			}
			host := map[string]string{"tofu": "registry.opentofu.org", "terraform": "registry.terraform.io"}[rt]
			// Under both hosts: after a switch of runtime, the state names
			// its providers by the host of the runtime that wrote it.
			for _, h := range []string{"registry.opentofu.org", "registry.terraform.io"} {
				found := false
				for name, hdr := range files {
					if strings.HasPrefix(name, "captf/providers/"+h+"/hashicorp/null/") && hdr.Typeflag == tar.TypeReg && strings.Contains(name, "terraform-provider-null") {
						found = hdr.Uid == 65532 && hdr.FileInfo().Mode().Perm()&0o111 != 0
					}
				}
				if !found {
					t.Errorf("no executable null provider owned by 65532 under /captf/providers/%s/hashicorp/null", h)
				}
			}
			in.Providers = []string{"acme/cloud"}
			if _, err := imagebuild.BuildModule(ctx, in); err == nil || !strings.Contains(err.Error(), host+"/acme/cloud") {
				t.Errorf("a provider the tool cache lacks: error %v, want one naming %s/acme/cloud", err, host)
			}
		})
	}
}
