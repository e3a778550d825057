package imagemeta

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/google/go-containerregistry/pkg/authn"
	corev1 "k8s.io/api/core/v1"
)

type pullSecretsKey struct{}

// WithPullSecrets makes the Registry reads of ctx authenticate with the
// image pull Secrets secrets (kubernetes.io/dockerconfigjson or
// kubernetes.io/dockercfg), before the Registry's own keychain.
func WithPullSecrets(ctx context.Context, secrets []corev1.Secret) context.Context {
	if len(secrets) == 0 {
		return ctx
	}
	return context.WithValue(ctx, pullSecretsKey{}, pullKeychain(secrets))
}

// dockerAuth is one registry's entry of a Docker config.
type dockerAuth struct {
	Auth     string `json:"auth"`
	Username string `json:"username"`
	Password string `json:"password"`
}

// fingerprint tells apart the credentials of two keychains (Cached keys
// its answers by it: an answer read with one tenant's credentials is
// never served to another).
func (k pullKeychain) fingerprint() string {
	h := sha256.New()
	for _, s := range k {
		for _, key := range slices.Sorted(maps.Keys(s.Data)) {
			fmt.Fprintf(h, "%s/%s/%s=%d:", s.Namespace, s.Name, key, len(s.Data[key]))
			h.Write(s.Data[key])
		}
	}
	return hex.EncodeToString(h.Sum(nil))
}

// pullKeychain resolves registries from the Secrets' Docker configs, the
// first Secret that names a registry winning.
type pullKeychain []corev1.Secret

// Resolve finds the registry of target in the Secrets; anonymous when
// none names it.
func (k pullKeychain) Resolve(target authn.Resource) (authn.Authenticator, error) {
	for _, s := range k {
		all := auths(s)
		for _, host := range slices.Sorted(maps.Keys(all)) {
			a := all[host]
			if normalizeHost(host) != target.RegistryStr() {
				continue
			}
			user, pass := a.Username, a.Password
			if a.Auth != "" {
				if raw, err := base64.StdEncoding.DecodeString(a.Auth); err == nil {
					user, pass, _ = strings.Cut(string(raw), ":")
				}
			}
			return authn.FromConfig(authn.AuthConfig{Username: user, Password: pass}), nil
		}
	}
	return authn.Anonymous, nil
}

// auths reads the registry entries of a pull Secret; none for another
// type or data that does not parse.
func auths(s corev1.Secret) map[string]dockerAuth {
	switch s.Type {
	case corev1.SecretTypeDockerConfigJson:
		var cfg struct {
			Auths map[string]dockerAuth `json:"auths"`
		}
		if json.Unmarshal(s.Data[corev1.DockerConfigJsonKey], &cfg) == nil {
			return cfg.Auths
		}
	case corev1.SecretTypeDockercfg:
		var cfg map[string]dockerAuth
		if json.Unmarshal(s.Data[corev1.DockerConfigKey], &cfg) == nil {
			return cfg
		}
	}
	return nil
}

// normalizeHost turns a Docker config key (https://host/v1/, host) into
// the registry host ggcr names; Docker Hub's legacy key included.
func normalizeHost(key string) string {
	key = strings.TrimPrefix(strings.TrimPrefix(key, "https://"), "http://")
	key, _, _ = strings.Cut(key, "/")
	if key == "docker.io" || key == "registry-1.docker.io" {
		return "index.docker.io"
	}
	return key
}
