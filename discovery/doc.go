// Package discovery is service discovery on ZooKeeper, compatible with
// Apache Curator's curator-x-discovery: Java services registered through
// Curator are found by Go services and the other way round.
//
// # Layout
//
// A [Discovery] works under a base path (Curator's basePath): each service
// is a container node, base/<service name>, and each instance a child
// named by its id holding the JSON of Curator's JsonInstanceSerializer
// ([Instance] marshals to it). Instance nodes are ephemeral for [Dynamic]
// instances (the default), persistent for [Static] and [Permanent] ones;
// a [DynamicSequential] instance's node is ephemeral sequential with
// Curator's protected name, _c_<uuid>-<id><sequence>, so that a create
// whose reply was lost is found again rather than made twice.
//
// # Registering: which form when
//
// [Discovery.Register] registers on the caller's Session and returns a
// [Registration] to update ([Registration.Update]) and remove it. A
// Dynamic instance lives as long as that Session: use this form when the
// instance should go with the Session, or when the Session also carries
// other recipes under the caller's own zkcoord.Supervise, whose work then
// calls [Registration.Reregister] with a Discovery on each new Session.
// Update records the data even when its write fails, so Reregister always
// registers the latest Update, never older data.
//
// [RegisterConfig] keeps an instance registered by itself: it opens
// Sessions from a Config through zkcoord.Supervise (its recovery events
// through zkcoord.WithRecoveryEvents) and, after a Session is lost or
// expires, registers the instance again on a new one with the data of the
// latest [SupervisedRegistration.Update], until Unregister. Use it for an
// instance that must stay registered, on a Session of its own.
//
// # Finding
//
// [Discovery.Names], [Discovery.Instances] and [Discovery.Instance] read
// the registry. A [Cache] ([Discovery.NewCache], Curator's ServiceCache)
// follows one service on one watch (a children cache of package cache,
// loaded in batches) and reports each instance added, updated and removed
// as an [Event]. A [Provider] ([Discovery.NewProvider], Curator's
// ServiceProvider) reads a Cache of its own and hands out instances with
// a [Strategy]: [RoundRobin] (the default), [Random] or [Sticky]. It
// skips disabled instances ("enabled": false), those a [WithFilter]
// filter rejects (Curator's InstanceFilter) and those down:
// [Provider.NoteError] counts an instance's failures and takes it out for
// a while once they reach [WithDownPolicy]'s threshold within its timeout
// (Curator's DownInstancePolicy, by default 2 errors in 30 seconds);
// [Provider.MarkDown] takes it out at once.
//
// Only instances that match their node are served: JSON naming the
// service of the parent node and the id the node is named by (for
// DynamicSequential, followed by a sequence number), with an address or a
// port. Other nodes are skipped and logged through the Session's logger;
// [Discovery.Instance] fails on them with an error wrapping
// zkcoord.ErrBadData. A cache or provider follows its service only while
// its Session lives: once it has ended or was closed, their reads fail
// with [ErrStopped], wrapping the Session's cause, rather than hand out
// what may be gone.
//
// # Concurrency
//
// All types are safe for concurrent use.
package discovery
