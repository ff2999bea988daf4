/*
 * lock.pml: the Mutex of package lock (Curator's InterProcessMutex
 * layout: ephemeral sequential _c_<uuid>-lock-<seq> nodes, the lowest
 * holds, each waiter watches the contender just before it), on the
 * Session's self-expiry (session.go).
 *
 * Size: NC clients (NC <= 3), FAULTS faults and user actions at most
 * (partition, pause, crash, restart, a waiter giving up, an operator
 * deleting a contender's node, a client locking again).
 *
 * Broken variants (each must yield a counterexample):
 *   -DNO_SELF_EXPIRY the Session never declares itself Lost: a partitioned
 *                   holder keeps the lock until it hears of the expiry
 *   -DNO_RELIST      a waiter whose predecessor goes takes the lock without
 *                   listing the contenders again
 *
 * Each step is one d_step: one ZooKeeper request or one local decision,
 * named in the comment above it as file.go function. Watches are flags set
 * by the write that fires them and consumed by a later step, so
 * notifications arrive arbitrarily late.
 *
 * Abstractions: contenders are ordered by creation (zxid order; the
 * sequence counter does not wrap); a process restart reuses its index
 * once its old session has expired; the holder's work is one "use" of a
 * fenced service per lease.
 */

#ifndef NC
#define NC 3
#endif
#ifndef FAULTS
#define FAULTS 2
#endif

#define OFF  0
#define LIVE 1
#define LOST 2

#define IDLE 0 /* no lock call under way */
#define DET  1 /* acquire.go wait: the contenders are to be listed */
#define WAIT 2 /* acquire.go block: watching the predecessor */
#define HOLD 3 /* a Lease: Done open */
#define GIVE 4 /* acquire.go deleteLater / held.go releaseNode: delete own node */

/* ---- ZooKeeper ---- */
bit  node[NC];
byte seq[NC];      /* sequence and czxid: the fencing token */
bit  srv[NC];
byte zxid;
byte pred[NC];     /* watch on the predecessor's node: its owner + 1 */
bit  notify[NC];   /* that watch fired */
bit  ownfired[NC]; /* the watch on its own node fired (deleted) */

/* ---- each process ---- */
byte lsess[NC];
bit  cut[NC];
bit  paused[NC];
bit  stale[NC];    /* ghost: session expired while paused holding */
bit  revoked[NC];  /* ghost: node deleted by someone else while holding */
byte st[NC];
bit  used[NC];
bit  locked[NC];   /* has called Lock once (the first call is free) */
byte lasttok;      /* ghost: token of the last grant */
byte svc;          /* fenced service: largest token accepted */

byte budget = FAULTS;
bit  served;       /* ghost: nobody is waiting for or holding the lock */

hidden byte hi, hj, hk;

#define UP(c)    (lsess[c] == LIVE && !paused[c])
#define RUNS(c)  (lsess[c] != OFF && !paused[c])
#define REACH(c) (UP(c) && !cut[c] && srv[c])

/* Invariant: at most one holder among clients whose process runs and whose
 * lease was not taken away behind their back (session expired while
 * paused, node deleted by an operator). */
inline check() {
	hk = 0;
	for (hi : 0 .. NC - 1) {
		if
		:: st[hi] == HOLD && !paused[hi] && !stale[hi] && !revoked[hi] -> hk++
		:: else -> skip
		fi
	}
	assert(hk <= 1)
}

inline update() {
	served = 1;
	for (hi : 0 .. NC - 1) {
		if :: st[hi] != IDLE -> served = 0 :: else -> skip fi
	}
}

#define END_STEP check(); update(); skip

inline node_gone(n) {
	node[n] = 0;
	for (hj : 0 .. NC - 1) {
		if :: pred[hj] == n + 1 -> notify[hj] = 1; pred[hj] = 0 :: else -> skip fi
	}
	if :: st[n] == WAIT || st[n] == HOLD -> ownfired[n] = 1 :: else -> skip fi
}

inline done(c) {
	st[c] = IDLE; used[c] = 0; pred[c] = 0; notify[c] = 0; ownfired[c] = 0
}

inline reset(c) {
	done(c); stale[c] = 0; revoked[c] = 0; cut[c] = 0; locked[c] = 0
}

proctype Client(byte c) {
end:
	do
	/* session.go checkSilence: Lost (or Expired reported): held.go run
	 * ends the lease (Done closes); acquire.go block returns the
	 * Session's error */
#ifndef NO_SELF_EXPIRY
	:: d_step { UP(c) && (cut[c] || !srv[c]) ->
#else
	:: d_step { UP(c) && !srv[c] ->
#endif
		lsess[c] = LOST; done(c); END_STEP }
	/* the process gives up its Session after the loss */
	:: d_step { RUNS(c) && lsess[c] == LOST -> lsess[c] = OFF; END_STEP }

	/* mutex.go Lock, acquire.go acquire: CreateProtectedAndList; the
	 * first Lock is free, later ones count against the budget */
	:: d_step { REACH(c) && st[c] == IDLE && !node[c] && (!locked[c] || budget > 0) ->
		if :: locked[c] -> budget-- :: else -> skip fi;
		locked[c] = 1;
		zxid++; node[c] = 1; seq[c] = zxid; st[c] = DET; END_STEP }
	/* acquire.go wait: list the contenders (contenders.go blocker): not
	 * found: ErrNodeDeleted; first: a Lease; otherwise dataWatch the
	 * predecessor (gone already: list again, in the same step) */
	:: d_step { REACH(c) && st[c] == DET ->
		if
		:: !node[c] -> done(c)
		:: else ->
			hk = 0;
			for (hi : 0 .. NC - 1) {
				if
				:: node[hi] && seq[hi] < seq[c] && (hk == 0 || seq[hi] > seq[hk - 1]) -> hk = hi + 1
				:: else -> skip
				fi
			}
			if
			:: hk == 0 ->
				/* property: fencing tokens never go backwards */
				assert(seq[c] > lasttok);
				lasttok = seq[c];
				st[c] = HOLD; used[c] = 0
			:: else -> pred[c] = hk; st[c] = WAIT
			fi
		fi;
		END_STEP }
	/* acquire.go block: the predecessor watch fires: list again */
	:: d_step { RUNS(c) && st[c] == WAIT && notify[c] ->
		notify[c] = 0;
#ifndef NO_RELIST
		st[c] = DET;
#else
		assert(seq[c] > lasttok);
		lasttok = seq[c];
		st[c] = HOLD; used[c] = 0;
#endif
		END_STEP }
	/* acquire.go block: the watch on its own node fires: ErrNodeDeleted */
	:: d_step { RUNS(c) && st[c] == WAIT && ownfired[c] -> done(c); END_STEP }
	/* acquire.go block: ctx ends: the waiter gives up, deleteLater */
	:: d_step { RUNS(c) && budget > 0 && (st[c] == WAIT || st[c] == DET) ->
		budget--; st[c] = GIVE; pred[c] = 0; notify[c] = 0; END_STEP }
	/* the holder works: it passes its token to a fenced service that
	 * refuses tokens older than the newest it accepted */
	:: d_step { RUNS(c) && st[c] == HOLD && !used[c] ->
		used[c] = 1;
		if
		:: seq[c] >= svc -> svc = seq[c]
		:: else -> assert(stale[c] || revoked[c])
		fi;
		END_STEP }
	/* held.go run: the own-node watch fires: lost (ErrNodeDeleted) */
	:: d_step { RUNS(c) && st[c] == HOLD && ownfired[c] -> done(c); END_STEP }
	/* held.go Release: releaseNode */
	:: d_step { RUNS(c) && st[c] == HOLD && used[c] -> st[c] = GIVE; used[c] = 0; END_STEP }
	/* held.go deleteNode / acquire.go deleteLater: delete the own node */
	:: d_step { REACH(c) && st[c] == GIVE ->
		if :: node[c] -> node_gone(c) :: else -> skip fi;
		done(c); END_STEP }
	od
}

#ifndef NO_SELF_EXPIRY
#define EXPIRABLE(c) (srv[c] && (lsess[c] == OFF || paused[c] || lsess[c] == LOST))
#else
#define EXPIRABLE(c) (srv[c] && (lsess[c] == OFF || paused[c] || cut[c]))
#endif

inline expire(c) {
	srv[c] = 0;
	if :: paused[c] && st[c] == HOLD -> stale[c] = 1 :: else -> skip fi;
	if :: node[c] -> node_gone(c) :: else -> skip fi
}

active proctype Server() {
end:
	do
	:: d_step { EXPIRABLE(0) -> expire(0); END_STEP }
	:: d_step { EXPIRABLE(1) -> expire(1); END_STEP }
#if NC > 2
	:: d_step { EXPIRABLE(2) -> expire(2); END_STEP }
#endif
	od
}

#define ENV_CLIENT(c) \
	/* the process (re)starts with a new Session */ \
	:: d_step { budget > 0 && lsess[c] == OFF && !srv[c] -> budget--; \
		reset(c); lsess[c] = LIVE; srv[c] = 1; END_STEP } \
	/* the process crashes */ \
	:: d_step { budget > 0 && lsess[c] != OFF -> budget--; \
		reset(c); lsess[c] = OFF; paused[c] = 0; END_STEP } \
	/* a network partition */ \
	:: d_step { budget > 0 && lsess[c] == LIVE && !cut[c] -> budget--; cut[c] = 1; END_STEP } \
	/* a pause of any length */ \
	:: d_step { budget > 0 && lsess[c] != OFF && !paused[c] -> budget--; paused[c] = 1; END_STEP } \
	:: d_step { paused[c] -> paused[c] = 0; END_STEP } \
	/* an operator deletes the contender's node */ \
	:: d_step { budget > 0 && node[c] -> budget--; \
		if :: st[c] == HOLD -> revoked[c] = 1 :: else -> skip fi; \
		node_gone(c); END_STEP }

active proctype Env() {
	do
	ENV_CLIENT(0)
	ENV_CLIENT(1)
#if NC > 2
	ENV_CLIENT(2)
#endif
	:: !paused[0] && !paused[1] && (NC < 3 || !paused[NC - 1]) -> break
	od
}

/* nothing can move any more: nobody is left waiting or holding */
active proctype Quiet() {
	timeout -> assert(served)
}

init {
	d_step {
		for (hi : 0 .. NC - 1) { lsess[hi] = LIVE; srv[hi] = 1 }
		END_STEP
	}
	atomic {
		for (hk : 0 .. NC - 1) { run Client(hk) }
	}
}

/* With faults over and weak fairness, every Lock call ends: each waiter
 * gets the lock (and releases it) or gives up. */
ltl all_served { <> [] served }
