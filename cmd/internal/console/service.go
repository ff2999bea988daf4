package console

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/zkcoord/zkcoord"
	"github.com/zkcoord/zkcoord/discovery"
)

// maxSummary is how many bytes of a payload or of member data are shown.
const maxSummary = 160

// isService tells a service of the discovery package (base/<service>/<id>,
// each instance node holding an instance's JSON) from other nodes whose
// children are named by ids, such as a double barrier's UUID members: it
// reads the data of the first child (from the store, as the recipe's own
// read does) and looks for an instance of the service named like p.
func (m *model) isService(p string, kids []string) bool {
	first := ""
	for _, k := range kids {
		if k != "ready" && (first == "" || k < first) {
			first = k
		}
	}
	if first == "" {
		return false
	}
	child := zkcoord.Join(p, first)
	data, _, err := m.store.get(child)
	if err != nil {
		return false
	}
	// A cached stat's NumChildren is that of its last read: the cache
	// reads a node again when its data changes, not its children.
	grandchildren, err := m.store.children(child)
	return err == nil && len(grandchildren) == 0 && instanceOf(zkcoord.Base(p), data)
}

// instanceOf reports whether data is the JSON of an instance of the
// service name: an object with that name, an id, and the address, port and
// registration time that Curator and the discovery package always write.
func instanceOf(name string, data []byte) bool {
	var fields map[string]json.RawMessage
	if json.Unmarshal(data, &fields) != nil {
		return false
	}
	for _, f := range []string{"address", "port", "registrationTimeUTC"} {
		if _, ok := fields[f]; !ok {
			return false
		}
	}
	var in struct {
		Name string `json:"name"`
		ID   string `json:"id"`
	}
	return json.Unmarshal(data, &in) == nil && in.Name == name && in.ID != ""
}

// readService reads a service's instances, sorted by id.
func (m *model) readService(p string) (*ServiceView, error) {
	kids, err := m.store.children(p)
	if err != nil {
		return nil, err
	}
	s := &ServiceView{Name: zkcoord.Base(p), Instances: []Instance{}}
	err = m.eachNode(p, kids, func(k string, data []byte, st *zkcoord.Stat) {
		s.Instances = append(s.Instances, instance(k, data, st))
	})
	if err != nil {
		return nil, err
	}
	slices.SortFunc(s.Instances, func(a, b Instance) int {
		return cmp.Or(strings.Compare(a.ID, b.ID), strings.Compare(a.Node, b.Node))
	})
	return s, nil
}

// instance decodes one instance node as the discovery package does.
func instance(node string, data []byte, st *zkcoord.Stat) Instance {
	in := Instance{Node: node, ID: node, Session: session(st)}
	var d discovery.Instance
	if err := json.Unmarshal(data, &d); err != nil {
		in.Error = "not an instance: " + err.Error()
		return in
	}
	in.ID, in.Address, in.Port, in.SSLPort = d.ID, d.Address, d.Port, d.SSLPort
	in.Type, in.URI, in.Disabled = string(d.ServiceType), d.URI(nil), d.Disabled
	if d.RegistrationTimeUTC > 0 {
		in.Registered = time.UnixMilli(d.RegistrationTimeUTC).UTC()
	}
	if len(d.Payload) > 0 {
		in.Payload = summary(d.Payload)
	}
	return in
}

// summary shows data as text: JSON compacted, anything longer than
// maxSummary bytes cut short, data that is not text as its size.
func summary(data []byte) string {
	var b bytes.Buffer
	if json.Valid(data) && json.Compact(&b, data) == nil {
		data = b.Bytes()
	}
	if !utf8.Valid(data) {
		return byteCount(len(data))
	}
	s := string(data)
	if strings.ContainsFunc(s, func(r rune) bool { return r < 0x20 && r != '\n' && r != '\t' }) {
		return byteCount(len(data))
	}
	if len(s) > maxSummary {
		cut := maxSummary
		for !utf8.RuneStart(s[cut]) {
			cut--
		}
		s = s[:cut] + "…"
	}
	return s
}

func byteCount(n int) string {
	if n == 1 {
		return "<1 byte>"
	}
	return fmt.Sprintf("<%d bytes>", n)
}
