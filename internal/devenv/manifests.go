package devenv

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// ReadManifests decodes every object of a multi-document YAML file.
func ReadManifests(path string) ([]*unstructured.Unstructured, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer func() { _ = f.Close() }()
	return DecodeManifests(f, path)
}

// DecodeManifests decodes every object of multi-document YAML; errors
// name the source.
func DecodeManifests(r io.Reader, source string) ([]*unstructured.Unstructured, error) {
	dec := utilyaml.NewYAMLReader(bufio.NewReader(r))
	var objs []*unstructured.Unstructured
	for {
		doc, err := dec.Read()
		if errors.Is(err, io.EOF) {
			return objs, nil
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", source, err)
		}
		u := &unstructured.Unstructured{}
		if err := utilyaml.Unmarshal(doc, &u.Object); err != nil {
			return nil, fmt.Errorf("%s: %w", source, err)
		}
		if len(u.Object) > 0 {
			objs = append(objs, u)
		}
	}
}

// ReadManifestDir decodes the objects of every *.yaml file of dir whose name
// starts with a digit, in name order.
func ReadManifestDir(dir string) ([]*unstructured.Unstructured, error) {
	files, err := filepath.Glob(filepath.Join(dir, "[0-9]*.yaml"))
	if err != nil {
		return nil, err
	}
	sort.Strings(files)
	var all []*unstructured.Unstructured
	for _, f := range files {
		objs, err := ReadManifests(f)
		if err != nil {
			return nil, err
		}
		all = append(all, objs...)
	}
	return all, nil
}

// Create creates each object; one that already exists is left as it is.
func Create(ctx context.Context, c client.Client, objs []*unstructured.Unstructured) error {
	for _, o := range objs {
		if err := c.Create(ctx, o); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("creating %s %s: %w", o.GetKind(), client.ObjectKeyFromObject(o), err)
		}
	}
	return nil
}

// Delete deletes each object in reverse order; one already gone is fine.
func Delete(ctx context.Context, c client.Client, objs []*unstructured.Unstructured) error {
	for i := len(objs) - 1; i >= 0; i-- {
		if err := c.Delete(ctx, objs[i]); err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("deleting %s %s: %w", objs[i].GetKind(), client.ObjectKeyFromObject(objs[i]), err)
		}
	}
	return nil
}
