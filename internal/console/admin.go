package console

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"time"

	"github.com/zkcoord/zkcoord"
	"github.com/zkcoord/zkcoord/rebalance"
)

// adminTimeout bounds one admin action.
const adminTimeout = 30 * time.Second

// AdminHeader must be present, with the value "1", on admin requests. A
// browser sends such a header across origins only after a CORS preflight,
// which the console never grants, so another site open in the operator's
// browser cannot submit admin actions.
const AdminHeader = "X-Zkcoord-Admin"

// admin checks that admin actions are enabled and that the request carries
// AdminHeader, and answers the request if not.
func (c *Console) admin(w http.ResponseWriter, r *http.Request) bool {
	if !c.opts.Admin {
		reply(w, http.StatusForbidden, "console: read-only (admin actions are not enabled)")
		return false
	}
	if r.Header.Get(AdminHeader) != "1" {
		reply(w, http.StatusForbidden, "console: admin requests need the header "+AdminHeader+": 1")
		return false
	}
	return true
}

func reply(w http.ResponseWriter, code int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(map[string]string{"result": msg})
}

// breakLock deletes the node of a lock's holder: form values path (the
// lock), node (the holder's node name) and confirm, which must repeat
// node. The node must be a current holder as the console last saw it.
func (c *Console) breakLock(w http.ResponseWriter, r *http.Request) {
	if !c.admin(w, r) {
		return
	}
	path, node, confirm := r.FormValue("path"), r.FormValue("node"), r.FormValue("confirm")
	if node == "" || confirm != node {
		reply(w, http.StatusBadRequest, "confirm must repeat the holder's node name")
		return
	}
	v, ok := c.hub.view(path)
	if !ok || v.Lock == nil {
		reply(w, http.StatusNotFound, "no lock at "+path)
		return
	}
	full := ""
	for _, h := range v.Lock.Holders {
		if h.Node == node {
			full = zkcoord.Join(path, node)
			if v.Kind == KindSemaphore {
				full = zkcoord.Join(path, "leases", node)
			}
		}
	}
	if full == "" {
		reply(w, http.StatusConflict, node+" does not hold "+path)
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), adminTimeout)
	defer cancel()
	err := c.sess.Delete(ctx, full, -1)
	c.log.Warn("console: admin: break lock", "lock", path, "node", full, "remote", r.RemoteAddr, "err", err)
	if err != nil && !errors.Is(err, zkcoord.ErrNoNode) {
		reply(w, http.StatusBadGateway, err.Error())
		return
	}
	reply(w, http.StatusOK, "deleted "+full)
}

// resource adds or removes a rebalancer resource: form values group (the
// group's path), op ("add" or "remove"), id and confirm, which must repeat
// id.
func (c *Console) resource(w http.ResponseWriter, r *http.Request) {
	if !c.admin(w, r) {
		return
	}
	group, op, id, confirm := r.FormValue("group"), r.FormValue("op"), r.FormValue("id"), r.FormValue("confirm")
	if id == "" || confirm != id {
		reply(w, http.StatusBadRequest, "confirm must repeat the resource id")
		return
	}
	if v, ok := c.hub.view(group); !ok || v.Group == nil {
		reply(w, http.StatusNotFound, "no rebalancer group at "+group)
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), adminTimeout)
	defer cancel()
	root, name := zkcoord.Parent(group), zkcoord.Base(group)
	var err error
	switch op {
	case "add":
		err = rebalance.AddResource(ctx, c.sess, root, name, id)
	case "remove":
		err = rebalance.RemoveResource(ctx, c.sess, root, name, id)
	default:
		reply(w, http.StatusBadRequest, `op must be "add" or "remove"`)
		return
	}
	c.log.Warn("console: admin: "+op+" resource", "group", group, "resource", id, "remote", r.RemoteAddr, "err", err)
	if err != nil {
		reply(w, http.StatusBadGateway, err.Error())
		return
	}
	reply(w, http.StatusOK, op+" "+id+": done")
}
