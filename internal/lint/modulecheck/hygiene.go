package modulecheck

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"

	"captf.io/captf/internal/lint"
	"captf.io/captf/pkg/contract"
)

// credentialNames are the provider arguments that hold a credential.
var credentialNames = []string{
	"access_key", "secret_key", "secret_access_key", "session_token", "token",
	"access_token", "auth_token", "bearer_token", "api_token", "api_key", "apikey",
	"password", "passphrase", "client_secret", "client_certificate",
	"client_certificate_password", "client_key", "private_key",
	"private_key_password", "ssh_private_key", "secret",
}

// capacityWords are the words of an attribute name (split at "_") that
// say it holds a group's desired size; capacityNames are whole names that
// do.
var (
	capacityWords = []string{"desired", "capacity", "replica", "replicas"}
	capacityNames = []string{"size", "count", "target_size", "node_count", "instance_count", "instances"}
)

// isCapacity tells whether an attribute name holds a desired size.
func isCapacity(attr string) bool {
	lower := strings.ToLower(attr)
	if slices.Contains(capacityNames, lower) {
		return true
	}
	return slices.ContainsFunc(strings.Split(lower, "_"), func(w string) bool { return slices.Contains(capacityWords, w) })
}

// checkModules runs the checks that look at every module, the root and
// the local ones it calls.
func (l *loader) checkModules(root *module, role contract.Role) error {
	for _, dir := range sortedKeys(l.modules) {
		m := l.modules[dir]
		l.checkBlocks(m)
		for _, s := range m.shadows {
			if err := l.checkShadow(m, s); err != nil {
				return err
			}
		}
	}
	if !root.version {
		l.add(idVersion, lint.Whole, 0, "the module sets no terraform { required_version }: say which runtime versions it was tested with")
	}
	if role == contract.RoleMachinePool {
		l.checkIgnoreChanges(root)
	}
	return nil
}

// checkBlocks reports the backend, cloud and provider blocks of a module
// that break the contract.
func (l *loader) checkBlocks(m *module) {
	for _, b := range m.backends {
		l.add(idBackend, b.file.rel, b.line, fmt.Sprintf("terraform { backend %q }: CAPTF owns the root and its backend: remove the block", b.name))
	}
	for _, b := range m.clouds {
		l.add(idCloud, b.file.rel, b.line, "terraform { cloud }: CAPTF owns the root and where its state lives: remove the block")
	}
	for _, p := range m.providers {
		l.checkProviderBody(p, p.body)
	}
}

// checkProviderBody reports credential arguments set to a literal, at
// the top of a provider block, in its nested blocks or in object values.
func (l *loader) checkProviderBody(p *block, body hcl.Body) {
	if sb, ok := body.(*hclsyntax.Body); ok {
		for _, name := range sortedKeys(sb.Attributes) {
			l.checkProviderArg(p, name, sb.Attributes[name].Expr)
		}
		for _, b := range sb.Blocks {
			l.checkProviderBody(p, b.Body)
		}
		return
	}
	attrs, _ := body.JustAttributes()
	for _, name := range sortedKeys(attrs) {
		l.checkProviderArg(p, name, attrs[name].Expr)
	}
}

func (l *loader) checkProviderArg(p *block, name string, e hcl.Expression) {
	if pairs, diags := hcl.ExprMap(e); !diags.HasErrors() {
		for _, pair := range pairs {
			l.checkProviderArg(p, keyName(pair.Key), pair.Value)
		}
		return
	}
	if items, diags := hcl.ExprList(e); !diags.HasErrors() {
		for _, item := range items {
			l.checkProviderArg(p, name, item)
		}
		return
	}
	if !slices.Contains(credentialNames, strings.ToLower(name)) {
		return
	}
	v, ok := literal(e)
	if !ok || v.IsNull() || v.Type().FriendlyName() != "string" || v.AsString() == "" {
		return
	}
	l.add(idProviderConfig, p.file.rel, e.Range().Start.Line, fmt.Sprintf("provider %q sets %q to a literal: a credential in a module image leaks to everyone who can pull it: take credentials from the Job's identity (environment or files)", p.name, name))
}

// checkShadow compares a .tf file with the .tofu file OpenTofu reads
// instead of it, and checks its blocks: Terraform reads it.
func (l *loader) checkShadow(m *module, s shadow) error {
	tf := newModule(m.dir, m.rel)
	if err := tf.decode(s.tf, false); err != nil {
		return err
	}
	l.checkBlocks(tf)
	tofu := newModule(m.dir, m.rel)
	if err := tofu.decode(s.tofu, false); err != nil {
		return err
	}
	a, b := declarations(tf), declarations(tofu)
	if !slices.Equal(a, b) {
		l.add(idTofuShadow, s.tf.rel, 1, fmt.Sprintf("%s shadows this file under OpenTofu, and they declare different things (%s): Terraform and OpenTofu would run different modules; declare the same things in both", s.tofu.rel, difference(a, b)))
	}
	return nil
}

func declarations(m *module) []string {
	var out []string
	for n := range m.variables {
		out = append(out, "variable."+n)
	}
	for n := range m.outputs {
		out = append(out, "output."+n)
	}
	for _, c := range m.calls {
		out = append(out, "module."+c.name)
	}
	for _, p := range m.providers {
		out = append(out, "provider."+p.name)
	}
	for _, r := range m.resources {
		out = append(out, r.typ+"."+r.name)
	}
	sort.Strings(out)
	return out
}

func difference(a, b []string) string {
	var only []string
	for _, x := range a {
		if !slices.Contains(b, x) {
			only = append(only, x+" only in the .tf file")
		}
	}
	for _, x := range b {
		if !slices.Contains(a, x) {
			only = append(only, x+" only in the .tofu file")
		}
	}
	if len(only) == 0 {
		return "the same names, declared differently"
	}
	if len(only) > 5 {
		only = append(only[:5], "…")
	}
	return strings.Join(only, ", ")
}

// checkIgnoreChanges warns a pool module that reads var.autoscaling but
// lets no resource ignore changes to its desired size, so each apply would
// undo the autoscaler's work.
func (l *loader) checkIgnoreChanges(root *module) {
	v := root.variables["autoscaling"]
	if v == nil || !used(root, "autoscaling", map[string]bool{}) {
		return
	}
	for _, m := range l.modules {
		for _, r := range m.resources {
			if r.ignoreAll {
				return
			}
			if slices.ContainsFunc(r.ignores, isCapacity) {
				return
			}
		}
	}
	l.add(idPoolIgnoreChanges, v.file.rel, v.line, `the module uses var.autoscaling, but no resource has lifecycle { ignore_changes } on its desired size: add it, or every apply undoes the autoscaler`)
}

// providers lists the source addresses of the providers every module
// requires or uses; a provider named only by its local name is implied
// under the hashicorp namespace, as the runtimes do.
func (l *loader) providers() []string {
	set := map[string]bool{}
	for _, m := range l.modules {
		names := map[string]bool{}
		for name, source := range m.required {
			names[name] = true
			if source == "" {
				source = "hashicorp/" + name
			}
			set[source] = true
		}
		implied := []string{}
		for _, p := range m.providers {
			implied = append(implied, p.name)
		}
		for _, t := range m.types {
			prefix, _, _ := strings.Cut(t, "_")
			implied = append(implied, prefix)
		}
		for _, name := range implied {
			if !names[name] && name != "terraform" {
				set["hashicorp/"+name] = true
			}
		}
	}
	delete(set, "terraform.io/builtin/terraform")
	return sortedKeys(set)
}
