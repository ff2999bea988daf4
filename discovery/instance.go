package discovery

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

// ServiceType is how an instance is registered, as curator-x-discovery
// names it.
type ServiceType string

const (
	// Dynamic instances are ephemeral nodes: they vanish with the Session
	// that registered them. The default.
	Dynamic ServiceType = "DYNAMIC"
	// DynamicSequential instances are ephemeral sequential nodes.
	DynamicSequential ServiceType = "DYNAMIC_SEQUENTIAL"
	// Static instances are persistent nodes, removed only by Unregister.
	Static ServiceType = "STATIC"
	// Permanent instances are persistent nodes meant never to be removed.
	Permanent ServiceType = "PERMANENT"
)

// Instance is one instance of a service, stored as the JSON that Curator's
// JsonInstanceSerializer reads and writes.
type Instance struct {
	// Name is the service's name, the parent node's name.
	Name string
	// ID identifies the instance within the service and names its node.
	// Register fills in a random UUID if it is empty.
	ID string
	// Address is the host name or IP address to reach the instance at.
	Address string
	// Port and SSLPort are the plain and TLS ports; 0 means none (null in
	// the JSON).
	Port, SSLPort int
	// Payload is any JSON value, or nil (null). For a Java peer whose
	// payload is a class of its own, Curator expects the class name in an
	// "@class" property of the object (Jackson's type information); a
	// Map payload needs none.
	Payload json.RawMessage
	// RegistrationTimeUTC is when the instance registered, in milliseconds
	// since the Unix epoch. Register fills it in if it is zero.
	RegistrationTimeUTC int64
	// ServiceType says how the node is created; empty means Dynamic.
	ServiceType ServiceType
	// URISpec is a template such as "{scheme}://{address}:{port}/api";
	// see URI. Empty means none.
	URISpec string
	// Disabled marks an instance that providers must not hand out
	// (Curator's "enabled": false).
	Disabled bool
}

// wire is the JSON form.
type wire struct {
	Name                string          `json:"name"`
	ID                  string          `json:"id"`
	Address             *string         `json:"address"`
	Port                *int            `json:"port"`
	SSLPort             *int            `json:"sslPort"`
	Payload             json.RawMessage `json:"payload"`
	RegistrationTimeUTC int64           `json:"registrationTimeUTC"`
	ServiceType         ServiceType     `json:"serviceType"`
	URISpec             *uriSpec        `json:"uriSpec"`
	Enabled             *bool           `json:"enabled,omitempty"`
}

// uriSpec is Curator's UriSpec: literal and variable parts.
type uriSpec struct {
	Parts []uriPart `json:"parts"`
}

type uriPart struct {
	Value    string `json:"value"`
	Variable bool   `json:"variable"`
}

// MarshalJSON writes the instance in Curator's form: absent ports and
// payload as null, the URI spec as its parts, "enabled" only when false.
func (in Instance) MarshalJSON() ([]byte, error) {
	w := wire{
		Name: in.Name, ID: in.ID, Payload: in.Payload,
		RegistrationTimeUTC: in.RegistrationTimeUTC, ServiceType: in.ServiceType,
	}
	if in.Address != "" {
		w.Address = &in.Address
	}
	if in.Port != 0 {
		w.Port = &in.Port
	}
	if in.SSLPort != 0 {
		w.SSLPort = &in.SSLPort
	}
	if len(in.Payload) == 0 {
		w.Payload = json.RawMessage("null")
	}
	if w.ServiceType == "" {
		w.ServiceType = Dynamic
	}
	if in.URISpec != "" {
		w.URISpec = parseURISpec(in.URISpec)
	}
	if in.Disabled {
		f := false
		w.Enabled = &f
	}
	return json.Marshal(w)
}

// UnmarshalJSON reads the instance as Curator writes it.
func (in *Instance) UnmarshalJSON(b []byte) error {
	var w wire
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	*in = Instance{
		Name: w.Name, ID: w.ID, RegistrationTimeUTC: w.RegistrationTimeUTC,
		ServiceType: w.ServiceType, Disabled: w.Enabled != nil && !*w.Enabled,
	}
	if w.Address != nil {
		in.Address = *w.Address
	}
	if w.Port != nil {
		in.Port = *w.Port
	}
	if w.SSLPort != nil {
		in.SSLPort = *w.SSLPort
	}
	if len(w.Payload) > 0 && string(w.Payload) != "null" {
		in.Payload = w.Payload
	}
	if w.URISpec != nil {
		in.URISpec = w.URISpec.String()
	}
	if in.ServiceType == "" {
		in.ServiceType = Dynamic
	}
	return nil
}

// parseURISpec splits a template into literal parts and {variable} parts.
func parseURISpec(s string) *uriSpec {
	spec := &uriSpec{Parts: []uriPart{}}
	for s != "" {
		open := strings.IndexByte(s, '{')
		if open < 0 {
			spec.Parts = append(spec.Parts, uriPart{Value: s})
			break
		}
		end := strings.IndexByte(s[open:], '}')
		if end < 0 {
			spec.Parts = append(spec.Parts, uriPart{Value: s})
			break
		}
		if open > 0 {
			spec.Parts = append(spec.Parts, uriPart{Value: s[:open]})
		}
		spec.Parts = append(spec.Parts, uriPart{Value: s[open+1 : open+end], Variable: true})
		s = s[open+end+1:]
	}
	return spec
}

// String returns the template back.
func (u *uriSpec) String() string {
	var b strings.Builder
	for _, p := range u.Parts {
		if p.Variable {
			b.WriteString("{" + p.Value + "}")
		} else {
			b.WriteString(p.Value)
		}
	}
	return b.String()
}

// URI fills in the instance's URISpec. Variables are looked up in vars
// first, then among the instance's own: scheme ("https" if SSLPort is set,
// else "http"), name, id, address, port, ssl-port, registration-time-utc
// and service-type. An unknown variable is left as it is, in braces.
func (in Instance) URI(vars map[string]string) string {
	if in.URISpec == "" {
		return ""
	}
	own := map[string]string{
		"name": in.Name, "id": in.ID, "address": in.Address,
		"registration-time-utc": strconv.FormatInt(in.RegistrationTimeUTC, 10),
		"service-type":          string(in.ServiceType), "scheme": "http",
	}
	if in.Port != 0 {
		own["port"] = strconv.Itoa(in.Port)
	}
	if in.SSLPort != 0 {
		own["ssl-port"] = strconv.Itoa(in.SSLPort)
		own["scheme"] = "https"
	}
	var b strings.Builder
	for _, p := range parseURISpec(in.URISpec).Parts {
		if !p.Variable {
			b.WriteString(p.Value)
			continue
		}
		if v, ok := vars[p.Value]; ok {
			b.WriteString(v)
		} else if v, ok := own[p.Value]; ok {
			b.WriteString(v)
		} else {
			b.WriteString("{" + p.Value + "}")
		}
	}
	return b.String()
}

// String describes the instance briefly.
func (in Instance) String() string {
	return fmt.Sprintf("%s/%s %s:%d", in.Name, in.ID, in.Address, in.Port)
}
