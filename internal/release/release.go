package release

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"

	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/api/resource"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	kyaml "sigs.k8s.io/kustomize/kyaml/yaml"
	"sigs.k8s.io/yaml"
)

// ProviderDir is the provider's directory in a clusterctl repository: its
// type and name as clusterctl labels them.
const ProviderDir = "infrastructure-terraform"

// ImageRepository is where the manager image of every release is pushed.
const ImageRepository = "ghcr.io/captf-io/cluster-api-provider-terraform"

// ComponentsFile and MetadataFile are the names clusterctl looks for.
const (
	ComponentsFile = "infrastructure-components.yaml"
	MetadataFile   = "metadata.yaml"
	ChecksumsFile  = "checksums.txt"
)

// Templates are the files of templates/ a release carries, as clusterctl
// finds them: flavors by name, ClusterClasses as clusterclass-<name>.yaml.
var Templates = []string{"cluster-template.yaml", "cluster-template-clusterclass.yaml", "clusterclass-noop.yaml", "identity.yaml"}

var versionPattern = regexp.MustCompile(`^v(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)(-rc\.(0|[1-9][0-9]*))?$`)

// Options say what to render.
type Options struct {
	// Repo is the CAPTF checkout.
	Repo string
	// Version is the release's version: vX.Y.Z or vX.Y.Z-rc.N.
	Version string
	// Out is the repository's root; the release lands in
	// <Out>/infrastructure-terraform/<Version>/, replacing what was there.
	Out string
}

// Render writes the release and returns its directory.
func Render(opts Options) (string, error) {
	m := versionPattern.FindStringSubmatch(opts.Version)
	if m == nil {
		return "", fmt.Errorf("VERSION %q is not a release version: use vX.Y.Z or vX.Y.Z-rc.N", opts.Version)
	}
	meta, err := ReadMetadata(filepath.Join(opts.Repo, MetadataFile))
	if err != nil {
		return "", err
	}
	major, _ := strconv.Atoi(m[1])
	minor, _ := strconv.Atoi(m[2])
	if !slices.ContainsFunc(meta.ReleaseSeries, func(s Series) bool { return s.Major == major && s.Minor == minor }) {
		return "", fmt.Errorf("VERSION %s: metadata.yaml has no release series %d.%d: append one (with its contract) before releasing", opts.Version, major, minor)
	}
	components, err := Components(opts.Repo, opts.Version)
	if err != nil {
		return "", err
	}
	dir := filepath.Join(opts.Out, ProviderDir, opts.Version)
	if err := os.RemoveAll(dir); err != nil {
		return "", err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	files := map[string][]byte{ComponentsFile: components}
	for _, name := range append([]string{MetadataFile}, Templates...) {
		src := filepath.Join(opts.Repo, "templates", name)
		if name == MetadataFile {
			src = filepath.Join(opts.Repo, MetadataFile)
		}
		if files[name], err = os.ReadFile(src); err != nil {
			return "", err
		}
	}
	var sums bytes.Buffer
	for _, name := range slices.Sorted(maps.Keys(files)) {
		if err := os.WriteFile(filepath.Join(dir, name), files[name], 0o644); err != nil {
			return "", err
		}
		sum := sha256.Sum256(files[name])
		fmt.Fprintf(&sums, "%s  %s\n", hex.EncodeToString(sum[:]), name)
	}
	return dir, os.WriteFile(filepath.Join(dir, ChecksumsFile), sums.Bytes(), 0o644)
}

// Components builds config/default with kustomize and sets the manager's
// image (its container and CAPTF_MANAGER_IMAGE, which the runner image
// defaults to) to the release's.
func Components(repo, version string) ([]byte, error) {
	k := krusty.MakeKustomizer(krusty.MakeDefaultOptions())
	res, err := k.Run(filesys.MakeFsOnDisk(), filepath.Join(repo, "config", "default"))
	if err != nil {
		return nil, fmt.Errorf("kustomize build config/default: %w", err)
	}
	image := ImageRepository + ":" + version
	found := false
	for _, r := range res.Resources() {
		if r.GetKind() == "Deployment" && r.GetName() == "captf-controller-manager" {
			if err := setManagerImage(r, image); err != nil {
				return nil, err
			}
			found = true
		}
	}
	if !found {
		return nil, errors.New("config/default renders no Deployment captf-controller-manager")
	}
	return res.AsYaml()
}

func setManagerImage(r *resource.Resource, image string) error {
	obj, err := r.Map()
	if err != nil {
		return err
	}
	containers, _ := dig(obj, "spec", "template", "spec", "containers").([]any)
	set := false
	for _, c := range containers {
		c := c.(map[string]any)
		if c["name"] != "manager" {
			continue
		}
		c["image"] = image
		env, _ := c["env"].([]any)
		for _, e := range env {
			if e := e.(map[string]any); e["name"] == "CAPTF_MANAGER_IMAGE" {
				e["value"] = image
			}
		}
		set = true
	}
	if !set {
		return errors.New("the Deployment captf-controller-manager has no container manager")
	}
	node, err := kyaml.FromMap(obj)
	if err != nil {
		return err
	}
	r.SetYNode(node.YNode())
	return nil
}

func dig(obj map[string]any, path ...string) any {
	var cur any = obj
	for _, p := range path {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil
		}
		cur = m[p]
	}
	return cur
}

// Metadata is clusterctl's metadata.yaml.
type Metadata struct {
	APIVersion    string   `json:"apiVersion"`
	Kind          string   `json:"kind"`
	ReleaseSeries []Series `json:"releaseSeries"`
}

// Series is a release series and the Cluster API contract it implements.
type Series struct {
	Major    int    `json:"major"`
	Minor    int    `json:"minor"`
	Contract string `json:"contract"`
}

// ReadMetadata reads a metadata.yaml.
func ReadMetadata(path string) (Metadata, error) {
	var m Metadata
	raw, err := os.ReadFile(path)
	if err != nil {
		return m, err
	}
	if err := yaml.UnmarshalStrict(raw, &m); err != nil {
		return m, fmt.Errorf("%s: %w", path, err)
	}
	return m, nil
}
