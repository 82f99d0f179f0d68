// Command generator writes the objectmatcher's facts about the built-in Kubernetes kinds
// (packages/objectmatcher/src/kube-facts.generated.ts) from the Go types the API server itself uses:
//
//   - reflection over the k8s.io/api types: pointer or value, `omitempty` (what absence means),
//     `patchStrategy`/`patchMergeKey` tags, quantities, int-or-string, []byte, embedded ObjectMeta;
//   - the OpenAPI definitions the API server publishes (k8s.io/kubernetes/pkg/generated/openapi): the
//     `+listType`, `+listMapKeys`, `+mapType` and `+structType` markers, which are comments in the Go
//     source and so invisible to reflection.
//
// It is pinned to the Kubernetes version of the local control plane (go.mod; a test checks the two
// agree). Run it with `npm run generate:matcher`, or `go run . > ../src/kube-facts.generated.ts`.
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"reflect"
	"runtime/debug"
	"sort"
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes/scheme"
	apiregistrationv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"
	"k8s.io/kube-openapi/pkg/common"
	"k8s.io/kube-openapi/pkg/validation/spec"
	"k8s.io/kubernetes/pkg/generated/openapi"
)

// field is what the matcher needs to know about one JSON field of a Go struct.
type field struct {
	Type          string   `json:"type"`
	Pointer       bool     `json:"pointer,omitempty"`
	Omitempty     bool     `json:"omitempty,omitempty"`
	PatchStrategy string   `json:"patchStrategy,omitempty"`
	PatchMergeKey string   `json:"patchMergeKey,omitempty"`
	ListType      string   `json:"listType,omitempty"`
	ListMapKeys   []string `json:"listMapKeys,omitempty"`
	MapType       string   `json:"mapType,omitempty"`
}

type structFacts struct {
	// Atomic: `+structType=atomic` (x-kubernetes-map-type on the definition).
	Atomic bool             `json:"atomic,omitempty"`
	Fields map[string]field `json:"fields"`
}

var (
	quantityType    = reflect.TypeOf(resource.Quantity{})
	intOrStringType = reflect.TypeOf(intstr.IntOrString{})
	timeType        = reflect.TypeOf(metav1.Time{})
	microTimeType   = reflect.TypeOf(metav1.MicroTime{})
	durationType    = reflect.TypeOf(metav1.Duration{})
	objectMetaType  = reflect.TypeOf(metav1.ObjectMeta{})
	marshalerType   = reflect.TypeOf((*json.Marshaler)(nil)).Elem()
)

type generator struct {
	defs    map[string]common.OpenAPIDefinition
	structs map[string]structFacts
	goNames map[string]string // short name → Go name, to catch collisions
	queue   []reflect.Type
}

func main() {
	s := runtime.NewScheme()
	must(scheme.AddToScheme(s))
	must(apiextensionsv1.AddToScheme(s))
	must(apiregistrationv1.AddToScheme(s))
	g := &generator{
		defs:    openapi.GetOpenAPIDefinitions(func(path string) spec.Ref { return spec.MustCreateRef(path) }),
		structs: map[string]structFacts{},
		goNames: map[string]string{},
	}
	kinds := map[string]string{}
	for gvk, t := range s.AllKnownTypes() {
		if strings.HasSuffix(gvk.Kind, "List") || !hasObjectMeta(t) {
			continue
		}
		kinds[gvk.GroupVersion().String()+" "+gvk.Kind] = g.typeName(t)
	}
	for len(g.queue) > 0 {
		t := g.queue[0]
		g.queue = g.queue[1:]
		g.walkStruct(t)
	}
	write(kinds, g.structs)
}

func hasObjectMeta(t reflect.Type) bool {
	f, ok := t.FieldByName("ObjectMeta")
	return ok && f.Type == objectMetaType
}

// shortName names a struct by its package's last two path elements: core/v1.Container.
func (g *generator) shortName(t reflect.Type) string {
	parts := strings.Split(t.PkgPath(), "/")
	short := t.Name()
	if len(parts) >= 2 {
		short = parts[len(parts)-2] + "/" + parts[len(parts)-1] + "." + t.Name()
	}
	goName := t.PkgPath() + "." + t.Name()
	if prev, ok := g.goNames[short]; ok && prev != goName {
		panic(fmt.Sprintf("two Go types named %s: %s and %s", short, prev, goName))
	}
	g.goNames[short] = goName
	return short
}

// typeName encodes a Go type as the matcher reads it: a scalar kind, "[]T", "map[]T" or a struct name.
func (g *generator) typeName(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t {
	case quantityType:
		return "quantity"
	case intOrStringType:
		return "int-or-string"
	case timeType, microTimeType:
		return "time"
	case durationType:
		return "string"
	}
	switch t.Kind() {
	case reflect.Bool:
		return "bool"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "int"
	case reflect.Float32, reflect.Float64:
		return "float"
	case reflect.String:
		return "string"
	case reflect.Slice:
		if t.Elem().Kind() == reflect.Uint8 {
			return "bytes"
		}
		return "[]" + g.typeName(t.Elem())
	case reflect.Map:
		return "map[]" + g.typeName(t.Elem())
	case reflect.Struct:
		// A struct with its own JSON form (RawExtension, FieldsV1, JSONSchemaPropsOrBool): free-form.
		if reflect.PointerTo(t).Implements(marshalerType) || t.Implements(marshalerType) {
			return "any"
		}
		name := g.shortName(t)
		if _, seen := g.structs[name]; !seen {
			g.structs[name] = structFacts{Fields: map[string]field{}}
			g.queue = append(g.queue, t)
		}
		return name
	}
	return "any"
}

func (g *generator) walkStruct(t reflect.Type) {
	name := g.shortName(t)
	facts := structFacts{Fields: map[string]field{}}
	def, known := g.defs[t.PkgPath()+"."+t.Name()]
	if known {
		facts.Atomic = def.Schema.Extensions["x-kubernetes-map-type"] == "atomic"
	}
	g.addFields(t, def.Schema.Properties, facts.Fields)
	g.structs[name] = facts
}

func (g *generator) addFields(t reflect.Type, props map[string]spec.Schema, out map[string]field) {
	for i := 0; i < t.NumField(); i++ {
		sf := t.Field(i)
		if !sf.IsExported() {
			continue
		}
		tag := sf.Tag.Get("json")
		if tag == "-" {
			continue
		}
		opts := strings.Split(tag, ",")
		jsonName := opts[0]
		if sf.Anonymous && jsonName == "" {
			// An embedded struct without a name (TypeMeta, VolumeSource) is inlined by encoding/json.
			inner := sf.Type
			for inner.Kind() == reflect.Pointer {
				inner = inner.Elem()
			}
			g.addFields(inner, props, out)
			continue
		}
		if jsonName == "" {
			jsonName = sf.Name
		}
		f := field{Type: g.typeName(sf.Type), Pointer: sf.Type.Kind() == reflect.Pointer}
		for _, o := range opts[1:] {
			if o == "omitempty" {
				f.Omitempty = true
			}
		}
		f.PatchStrategy = sf.Tag.Get("patchStrategy")
		f.PatchMergeKey = sf.Tag.Get("patchMergeKey")
		if prop, ok := props[jsonName]; ok {
			f.ListType, _ = prop.Extensions["x-kubernetes-list-type"].(string)
			f.MapType, _ = prop.Extensions["x-kubernetes-map-type"].(string)
			if keys, ok := prop.Extensions["x-kubernetes-list-map-keys"].([]interface{}); ok {
				for _, k := range keys {
					f.ListMapKeys = append(f.ListMapKeys, fmt.Sprint(k))
				}
			}
		}
		out[jsonName] = f
	}
}

func write(kinds map[string]string, structs map[string]structFacts) {
	w := bufio.NewWriter(os.Stdout)
	defer func() { must(w.Flush()) }()
	fmt.Fprintln(w, "// Code generated by packages/objectmatcher/generator from the Go types of Kubernetes "+kubeVersion()+"; DO NOT EDIT.")
	fmt.Fprintln(w, "// Regenerate with `npm run generate:matcher`; kube-facts.test.ts fails when this file is stale.")
	fmt.Fprintf(w, "export const KUBERNETES_VERSION = %q;\n\n", kubeVersion())
	fmt.Fprintln(w, "/** `apiVersion Kind` → the Go struct of the object. */")
	fmt.Fprintln(w, "export const KINDS: Readonly<Record<string, string>> = {")
	for _, k := range sortedKeys(kinds) {
		fmt.Fprintf(w, "  %q: %q,\n", k, kinds[k])
	}
	fmt.Fprintln(w, "};")
	fmt.Fprintln(w)
	// JSON text per struct, not object literals: a process builds the objects of the few structs its
	// kinds use (facts.ts goStruct); ~1,100 structs as literals held 1.2 MiB of heap in every reconciler.
	fmt.Fprintln(w, "/** Go struct → its JSON fields, as JSON text (read with goStruct in facts.ts). */")
	fmt.Fprintln(w, "export const STRUCTS: Readonly<Record<string, string>> = {")
	for _, name := range sortedKeys(structs) {
		b, err := json.Marshal(structs[name])
		must(err)
		if strings.ContainsAny(string(b), `'\`) {
			panic(name + ": a quote or backslash in the facts")
		}
		fmt.Fprintf(w, "  %q: '%s',\n", name, b)
	}
	fmt.Fprintln(w, "};")
}

// kubeVersion is the k8s.io/kubernetes version this binary was built against.
func kubeVersion() string {
	info, ok := debug.ReadBuildInfo()
	if ok {
		for _, dep := range info.Deps {
			if dep.Path == "k8s.io/kubernetes" {
				return dep.Version
			}
		}
	}
	panic("k8s.io/kubernetes is not in the build info")
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func must(err error) {
	if err != nil {
		panic(err)
	}
}
