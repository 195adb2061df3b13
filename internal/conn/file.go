package conn

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/causalctl/causalctl/internal/kafka"
)

// configFile is the config file: named profiles and an optional default.
type configFile struct {
	current  string
	profiles map[string]profile
}

// profile is one profile's keys, dotted ("tls.ca"), with their YAML nodes.
type profile map[string]*yaml.Node

// refusedKey may not be written: passwords stay out of the config file.
const refusedKey = "sasl.password"

func (fc *configFile) names() []string {
	names := slices.Sorted(func(yield func(string) bool) {
		for n := range fc.profiles {
			if !yield(n) {
				return
			}
		}
	})
	if len(names) == 0 {
		return []string{"none"}
	}
	return names
}

// readConfigFile reads and checks the config file: every key of every
// profile must be a profile key of the settings table.
func readConfigFile(path string) (*configFile, error) {
	data, err := kafka.ReadFileLimit("config file", path, kafka.MaxConfigFile)
	if err != nil {
		return nil, fmt.Errorf("config file: %w", err)
	}
	fc := &configFile{profiles: map[string]profile{}}
	var doc yaml.Node
	// An empty file is an empty config: the decoder reports it as io.EOF.
	if err := yaml.NewDecoder(bytes.NewReader(data)).Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return fc, nil
		}
		return nil, fmt.Errorf("config file %s: %w", path, err)
	}
	bad := func(n *yaml.Node, format string, args ...any) error {
		return fmt.Errorf("config file %s: line %d: %s", path, n.Line, fmt.Sprintf(format, args...))
	}
	top := doc.Content[0]
	if top.Kind != yaml.MappingNode {
		return nil, bad(top, "want a mapping of current_profile and profiles")
	}
	for i := 0; i+1 < len(top.Content); i += 2 {
		k, v := top.Content[i], top.Content[i+1]
		switch k.Value {
		case "current_profile":
			if v.Kind != yaml.ScalarNode {
				return nil, bad(v, "current_profile: want a profile name")
			}
			fc.current = v.Value
		case "profiles":
			if v.Kind != yaml.MappingNode {
				return nil, bad(v, "profiles: want a mapping of names to profiles")
			}
			for j := 0; j+1 < len(v.Content); j += 2 {
				name, body := v.Content[j].Value, v.Content[j+1]
				p := profile{}
				if err := p.flatten("", body, bad); err != nil {
					return nil, fmt.Errorf("%w (profile %q)", err, name)
				}
				fc.profiles[name] = p
			}
		default:
			return nil, bad(k, "unknown key %q (want current_profile or profiles)", k.Value)
		}
	}
	return fc, nil
}

// flatten adds the keys of a profile mapping under prefix, refusing keys
// the settings table does not know.
func (p profile) flatten(prefix string, n *yaml.Node, bad func(*yaml.Node, string, ...any) error) error {
	if n.Kind != yaml.MappingNode {
		return bad(n, "want a mapping of settings")
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		key := prefix + k.Value
		if v.Kind == yaml.MappingNode && isSection(key) {
			if err := p.flatten(key+".", v, bad); err != nil {
				return err
			}
			continue
		}
		if !isKey(key) && key != refusedKey {
			return bad(k, "unknown key %q", key)
		}
		p[key] = v
	}
	return nil
}

// isKey reports whether key is a profile key of the table.
func isKey(key string) bool {
	return slices.ContainsFunc(settings, func(s Setting) bool { return s.Key == key })
}

// isSection reports whether key is the section of some profile keys
// ("tls" of "tls.ca").
func isSection(key string) bool {
	return slices.ContainsFunc(settings, func(s Setting) bool { return strings.HasPrefix(s.Key, key+".") })
}

// layer reads the profile's settings. Relative paths are taken relative to
// the config file's directory, and ~/ is the home directory. An empty
// value is not set.
func (p profile) layer(name, dir string, getenv func(string) string) (layer, error) {
	where := "profile " + strconv.Quote(name)
	if _, ok := p[refusedKey]; ok {
		return nil, fmt.Errorf("%s: sasl.password is not accepted: put the password in an environment variable (password_env) or a file (password_file)", where)
	}
	l := layer{}
	for _, s := range settings {
		n, ok := p[s.Key]
		if s.Key == "" || !ok {
			continue
		}
		from := where + " " + s.Key
		var v any
		if s.Kind == KindList && n.Kind == yaml.SequenceNode {
			var list []string
			if err := n.Decode(&list); err != nil {
				return nil, fmt.Errorf("%s: want a list of host:port: %w", from, err)
			}
			v = cleanList(list)
		} else {
			if n.Kind != yaml.ScalarNode {
				return nil, fmt.Errorf("%s: want a single value", from)
			}
			if n.Value == "" {
				continue
			}
			var err error
			if v, err = parseText(s, n.Value); err != nil {
				return nil, fmt.Errorf("%s %q: %w", from, n.Value, err)
			}
			if s.Kind == KindPath {
				v = resolvePath(v.(string), dir, getenv)
			}
		}
		l[s.Name] = value{v, from}
	}
	return l, checkGroups(l)
}

// resolvePath makes a profile's path absolute: ~/ is $HOME, and a relative
// path is relative to the config file's directory.
func resolvePath(s, dir string, getenv func(string) string) string {
	if rest, ok := strings.CutPrefix(s, "~/"); ok && getenv("HOME") != "" {
		return filepath.Join(getenv("HOME"), rest)
	}
	if !filepath.IsAbs(s) {
		return filepath.Join(dir, s)
	}
	return s
}
