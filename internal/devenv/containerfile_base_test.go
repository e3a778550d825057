package devenv_test

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"captf.io/captf/internal/imagebuild"
	"captf.io/captf/internal/jobs"
)

// The base images' Containerfile builds what `make images` builds
// (internal/imagebuild.BaseSpec), for both runtimes: the runtime and the
// shell at the same paths and modes, the files its build stage lays out
// (the /captf/runtime link, passwd and group of captf, a sticky /tmp,
// /captf, the CA bundle), the same user, working directory, entrypoint
// and labels, the runtime versions hack/tools pins, and nothing at the
// paths a module image adds or a Job mounts.
func TestBaseContainerfile(t *testing.T) {
	root := repoRoot(t)
	cf := parseContainerfile(t, filepath.Join(root, "images", "base", "Containerfile"))
	checkArgScopes(t, cf)
	pins := pinnedVersions(t, root)
	var script string
	for _, in := range cf.stages[0].instrs {
		if in.cmd == "RUN" {
			script += in.words[0]
		}
	}
	for name, rt := range imagebuild.BaseRuntimes {
		t.Run(name, func(t *testing.T) {
			img := cf.build(t, map[string]string{"RUNTIME": rt})
			version := strings.TrimPrefix(pins[strings.ToUpper(rt)+"_VERSION"], "v")
			spec := imagebuild.BaseSpec(imagebuild.BaseInputs{Runtime: rt, Version: version, Bin: "runtime", Shell: "sh", CAs: "cas"}, "amd64", imagebuild.Meta{})
			copied := map[string]string{}
			for _, c := range img.copies {
				copied[dest(c)] = c.flags["chmod"]
			}
			for _, f := range spec.Files {
				switch {
				case f.Source != "" && f.Path != imagebuild.CABundlePath:
					if mode, ok := copied[f.Path]; !ok || mode != "0755" {
						t.Errorf("the Containerfile does not copy %s with --chmod=0755 (copies: %v)", f.Path, copied)
					}
				case f.Link != "":
					if !strings.Contains(script, `ln -s "`+strings.ReplaceAll(f.Link, rt, "$RUNTIME")+`" /rootfs`+f.Path) {
						t.Errorf("the build stage does not link %s to %s", f.Path, f.Link)
					}
				case f.Data != nil:
					if written := strings.ReplaceAll(string(f.Data), "\n", `\n`); !strings.Contains(script, "'"+written+"' >/rootfs"+f.Path) {
						t.Errorf("the build stage does not write %s as imagebuild does (%q)", f.Path, f.Data)
					}
				case f.Dir && f.Mode&os.ModeSticky != 0:
					if !strings.Contains(script, fmt.Sprintf("chmod %o /rootfs%s", f.Mode.Perm()|0o1000, f.Path)) {
						t.Errorf("the build stage does not make %s sticky with mode %o", f.Path, f.Mode.Perm())
					}
				default:
					if !strings.Contains(script, "/rootfs"+f.Path) {
						t.Errorf("the build stage does not lay out %s, which imagebuild's base holds", f.Path)
					}
				}
			}
			if _, ok := copied["/"]; !ok {
				t.Errorf("the Containerfile does not copy the build stage's /rootfs/ to / (copies: %v)", copied)
			}
			for d := range copied {
				for _, reserved := range []string{jobs.ModuleDir, jobs.ProvidersDir, jobs.RunnerDir, jobs.WorkDir, jobs.ConfigDir, jobs.PlanKeyDir, jobs.CredentialsMountPath} {
					if d == reserved || strings.HasPrefix(d, reserved+"/") {
						t.Errorf("the base image writes %s, a path a module image adds or a Job mounts", d)
					}
				}
			}
			if img.user != spec.User || img.workdir != spec.WorkingDir || !slices.Equal(img.entrypoint, spec.Entrypoint) {
				t.Errorf("the Containerfile runs %q as %s in %s; imagebuild %q as %s in %s",
					img.entrypoint, img.user, img.workdir, spec.Entrypoint, spec.User, spec.WorkingDir)
			}
			for k, v := range spec.Labels {
				if strings.HasPrefix(k, "io.captf.") && img.labels[k] != v {
					t.Errorf("label %s is %q in the Containerfile, %q in imagebuild's base", k, img.labels[k], v)
				}
			}
			if got, want := slices.Sorted(maps.Keys(img.labels)), slices.Sorted(maps.Keys(spec.Labels)); !slices.Equal(got, want) {
				t.Errorf("the Containerfile labels %v; imagebuild %v", got, want)
			}
			if version == "" {
				t.Errorf("hack/tools/versions.env pins no %s_VERSION", strings.ToUpper(rt))
			}
		})
	}
}
