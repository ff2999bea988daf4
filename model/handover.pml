/*
 * handover.pml: the rebalancer's lock-delay on its barriers, kept by the
 * handover marks (rebalance/handover.go, rebalance/barrier.go,
 * rebalance/member.go acquire and takeoverDelay, rebalance/executor.go),
 * with time.
 *
 * One resource, NC members (NC <= 3). Its barrier, barriers/<r>, is an
 * ephemeral node; its handover mark, handovers/<r>, a persistent node
 * whose data say "held" or "released" and whose version counts the
 * writes. A member told by the allocation to run the resource reads the
 * barrier and the mark (lookAtBarrier), waits for a barrier of someone
 * else to be deleted (then reads the mark again), and creates the barrier
 * in one transaction with the set of the mark to "held" at the version it
 * read (createBarrier). If the mark it read was not "released" it waits
 * DELAY ticks before it acts (takeoverDelay); otherwise it acts at once.
 * A member that loses the resource in the allocation stops it
 * (Unassigned), reads the barrier, and if it is still its own deletes it
 * and sets the mark "released" in one transaction (releaseBarrier). An
 * expiry deletes the barrier alone and leaves the mark "held", and so
 * does an operator who deletes it by hand. A release marks the resource
 * released only if the releasing member's own takeover was clean or its
 * delay was waited out: a member whose allocation moved while it waited
 * gives the barrier back unmarked, since the owner before it may still be
 * paused. Every barrier has version 0, so the release's delete, by the
 * version read, would delete whichever barrier stands there by then: the
 * transaction also requires the mark at the version the member's own
 * take left, which any later take moves.
 *
 * Size: NC members, FAULTS faults and actions at most (a crash, a
 * restart, a partition, a pause, an operator deleting the barrier, a
 * rebalancing that moves the resource between live members).
 *
 * Time passes in ticks (the Clock process) while something counts it: a
 * pause, which lasts at most PAUSE ticks, or a lock-delay. A process that
 * runs while its session is gone at the server handles that before the
 * next tick and before it can be paused again (its silence timer is
 * overdue on resume), as in lock.pml -DTIMED.
 *
 * Property: with DELAY > PAUSE, at most one member acts on the resource
 * among those whose process runs, counting one whose session expired
 * while it was paused (stale): no overlap even without fencing. Not
 * counted: a member whose own barrier an operator deleted (revoked), which
 * learns of it from a watch whose delivery has no bound
 * (docs/protocol.md, Lock-delay).
 *
 * Broken variants (each must yield a counterexample):
 *   -DDELAY=n with n <= PAUSE, or DELAY=0: a paused owner resumes while
 *                   the next one acts
 *   -DNO_VERSION_CHECK the take sets the mark whatever its version: a
 *                   mark read "released" before a take and expiry of
 *                   someone else still counts as clean
 *   -DSPLIT_RELEASE the release deletes the barrier, and sets the mark
 *                   "released" in a request of its own afterwards, over a
 *                   later owner's "held"
 *   -DMARK_CANCELLED a member whose allocation moved during its delay
 *                   releases the barrier marked "released"
 *   -DUNGUARDED_RELEASE the release's transaction does not check the
 *                   mark: a barrier deleted by hand between the release's
 *                   read and its transaction, and created again by the
 *                   next owner, is deleted and marked released instead
 *
 * Each step is one d_step: one ZooKeeper request (or one atomic multi) or
 * one local decision, named in the comment above it as file.go function.
 * The barrier's deletion watch is a flag set by the write that fires it
 * and consumed by a later step, so notifications arrive arbitrarily late.
 *
 * Abstractions: the coordinator is the Env process: after the owner's
 * session expires it moves the resource to any member whose session lives
 * at the server (free), and it may move it between live members as a
 * rebalancing (from the budget); the resource is neither removed nor
 * added (mark deletion and markNew are left out); a process
 * restart reuses its index once its old session has expired; the create
 * of the barrier and the call of Assigned after any delay are one step
 * each.
 */

#ifndef NC
#define NC 2
#endif
#ifndef FAULTS
#define FAULTS 2
#endif
#ifndef PAUSE
#define PAUSE 1
#endif
#ifndef DELAY
#define DELAY 0
#endif

#define OFF  0
#define LIVE 1
#define LOST 2

#define IDLE  0 /* not running the resource, no barrier */
#define LOOK  1 /* member.go acquire: barrier and mark to be read */
#define WAITB 2 /* barrier.go acquireBarrier: watching another's barrier */
#define READM 3 /* barrier.go acquireBarrier: seen deleted; mark to be read */
#define CREAT 4 /* barrier.go createBarrier: the transaction to be sent */
#define DLY   5 /* member.go acquire: waiting the lock-delay out */
#define RUN   6 /* executor.go do: Assigned called, the resource in use */
#define REL   7 /* executor.go do: Unassigned returned; releaseBarrier reads the barrier */
#define RELTX 8 /* barrier.go releaseBarrier: the transaction to be sent */
#define MARK  9 /* -DSPLIT_RELEASE: the mark's set still to be sent */

/* ---- ZooKeeper ---- */
byte barrier;      /* owner + 1; 0: none */
byte btok;         /* its czxid */
bit  mrel = 1;     /* the mark says "released" (AddResource's markNew) */
byte mver;         /* the mark's version */
byte zxid;
bit  srv[NC];
bit  bfired[NC];   /* the existence watch on the barrier fired (deleted) */

/* ---- the coordinator's allocation ---- */
byte alloc = 1;    /* the member the resource is assigned to, + 1 */

/* ---- each member ---- */
byte lsess[NC];
bit  cut[NC];
bit  paused[NC];
bit  stale[NC];    /* ghost: session expired while paused, holding */
bit  revoked[NC];  /* ghost: own barrier deleted by an operator while holding */
byte st[NC];
bit  rrel[NC];     /* the mark as read: "released" */
byte rver[NC];     /* the mark as read: its version */
byte tok[NC];      /* own barrier's czxid */
bit  waited[NC];   /* takeover clean, or its delay waited out */
byte held[NC];     /* the mark's version that the take left */
bit  ung[NC];      /* the release's mark guard failed: the barrier goes alone */
byte dl[NC];       /* ticks of lock-delay left */
byte pz[NC];       /* ticks of pause left */

byte budget = FAULTS;

hidden byte hi, hk;

#define UP(c)    (lsess[c] == LIVE && !paused[c])
#define RUNS(c)  (lsess[c] != OFF && !paused[c])
#define REACH(c) (UP(c) && !cut[c] && srv[c])

/* Invariant: at most one member acts on the resource among those whose
 * process runs, counting a stale one: no fencing refuses it. */
inline check() {
	hk = 0;
	for (hi : 0 .. NC - 1) {
		if
		:: st[hi] == RUN && !paused[hi] && !revoked[hi] -> hk++
		:: else -> skip
		fi
	}
	assert(hk <= 1)
}

#define END_STEP check(); skip

inline barrier_gone() {
	barrier = 0;
	for (hi : 0 .. NC - 1) { bfired[hi] = 1 }
}

inline done(c) {
	st[c] = IDLE; bfired[c] = 0; dl[c] = 0; waited[c] = 0; revoked[c] = 0; ung[c] = 0
}

inline reset(c) {
	done(c); stale[c] = 0; cut[c] = 0
}

proctype Member(byte c) {
end:
	do
	/* session.go checkSilence: Lost (or Expired reported): the member
	 * stops the resource and leaves its barrier to the server */
	:: d_step { UP(c) && (cut[c] || !srv[c]) -> lsess[c] = LOST; done(c); END_STEP }
	/* the process gives up its Session after the loss */
	:: d_step { RUNS(c) && lsess[c] == LOST -> lsess[c] = OFF; END_STEP }

	/* member.go reconcile: the allocation gives the resource: acquire */
	:: d_step { RUNS(c) && st[c] == IDLE && alloc == c + 1 -> st[c] = LOOK; END_STEP }
	/* member.go drop: the allocation moved while acquiring: cancel (a
	 * transaction already sent goes on: see CREAT) */
	:: d_step { RUNS(c) && (st[c] == LOOK || st[c] == WAITB || st[c] == READM) && alloc != c + 1 ->
		done(c); END_STEP }
	/* barrier.go lookAtBarrier: ExistsW on the barrier and the mark's
	 * read, in one round trip */
	:: d_step { REACH(c) && st[c] == LOOK ->
		if
		:: barrier != 0 -> bfired[c] = 0; st[c] = WAITB
		:: else -> rrel[c] = mrel; rver[c] = mver; st[c] = CREAT
		fi;
		END_STEP }
	/* barrier.go acquireBarrier: the watch fires: seen deleted */
	:: d_step { RUNS(c) && st[c] == WAITB && bfired[c] -> bfired[c] = 0; st[c] = READM; END_STEP }
	/* barrier.go acquireBarrier (free): read the mark, create at once */
	:: d_step { REACH(c) && st[c] == READM -> rrel[c] = mrel; rver[c] = mver; st[c] = CREAT; END_STEP }
	/* barrier.go createBarrier: create the barrier and set the mark to
	 * "held" at the version read; a barrier there (NodeExists) or a mark
	 * moved (BadVersion) fails it and the member looks again. Then
	 * member.go takeoverDelay: wait the delay unless the mark read said
	 * "released". */
	:: d_step { REACH(c) && st[c] == CREAT ->
		if
		:: barrier != 0 -> st[c] = LOOK
#ifndef NO_VERSION_CHECK
		:: barrier == 0 && rver[c] != mver -> st[c] = LOOK
		:: barrier == 0 && rver[c] == mver ->
#else
		:: barrier == 0 ->
#endif
			zxid++; barrier = c + 1; btok = zxid; tok[c] = zxid; bfired[c] = 0;
			mrel = 0; mver++; held[c] = mver;
			if
			:: rrel[c] || DELAY == 0 -> waited[c] = 1; st[c] = RUN
			:: else -> waited[c] = 0; dl[c] = DELAY; st[c] = DLY
			fi
		fi;
		END_STEP }
	/* member.go acquire: the delay has passed: Assigned */
	:: d_step { RUNS(c) && st[c] == DLY && dl[c] == 0 && alloc == c + 1 -> waited[c] = 1; st[c] = RUN; END_STEP }
	/* member.go onAcquired: the allocation moved during the delay: the
	 * barrier is given back without Assigned */
	:: d_step { RUNS(c) && st[c] == DLY && alloc != c + 1 -> dl[c] = 0; st[c] = REL; END_STEP }
	/* member.go drop, executor.go do: the allocation moved: Unassigned
	 * returns (the resource is stopped) */
	:: d_step { RUNS(c) && st[c] == RUN && alloc != c + 1 -> st[c] = REL; END_STEP }
	/* barrier.go watchBarrier: the own barrier was deleted (by an
	 * operator, or by someone else's release): the member stops the
	 * resource (ErrBarrierLost) and has nothing to delete */
	:: d_step { RUNS(c) && st[c] == RUN && bfired[c] && !(barrier == c + 1 && btok == tok[c]) ->
		done(c); END_STEP }
	/* barrier.go releaseBarrier: read the barrier: gone, or another's:
	 * nothing to do */
	:: d_step { REACH(c) && st[c] == REL ->
		if
		:: barrier == c + 1 && btok == tok[c] -> st[c] = RELTX
		:: else -> done(c)
		fi;
		END_STEP }
	/* barrier.go release.try: delete the barrier at the version read
	 * (every barrier has version 0: whichever barrier is there now) and,
	 * in the same transaction, check the mark at the version the take
	 * left and set it "released" if the takeover was clean or its delay
	 * waited out. A guard that fails (someone took since) sends the
	 * member back to read the barrier, and the barrier then goes alone. */
	:: d_step { REACH(c) && st[c] == RELTX ->
		if
		:: barrier == 0 -> done(c)
#ifndef UNGUARDED_RELEASE
		:: barrier != 0 && !ung[c] && mver != held[c] -> ung[c] = 1; st[c] = REL
		:: barrier != 0 && (ung[c] || mver == held[c]) ->
#else
		:: barrier != 0 ->
#endif
			barrier_gone();
#ifdef SPLIT_RELEASE
			st[c] = MARK
#else
#ifndef MARK_CANCELLED
			if :: waited[c] && !ung[c] -> mrel = 1; mver++ :: else -> skip fi;
#else
			if :: !ung[c] -> mrel = 1; mver++ :: else -> skip fi;
#endif
			done(c)
#endif
		fi;
		END_STEP }
#ifdef SPLIT_RELEASE
	/* broken: the mark is set "released" in a request of its own */
	:: d_step { REACH(c) && st[c] == MARK -> mrel = 1; mver++; done(c); END_STEP }
#endif
	od
}

#define EXPIRABLE(c) (srv[c] && (lsess[c] == OFF || paused[c] || lsess[c] == LOST))

/* the server expires a session: its barrier goes, the mark stays */
inline expire(c) {
	srv[c] = 0;
	if :: paused[c] && (st[c] == RUN || st[c] == DLY) -> stale[c] = 1 :: else -> skip fi;
	if :: barrier == c + 1 -> barrier_gone() :: else -> skip fi
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

/* A process that runs with its session gone at the server, not yet told,
 * handles that before time passes, and before it can be paused again. */
#define URGENT(c) (!paused[c] && lsess[c] == LIVE && !srv[c])

#define ENV_MEMBER(c) \
	/* coordinator.go: the owner's session expired (its client node went): \
	 * the resource moves to a member whose session lives */ \
	:: d_step { alloc != c + 1 && srv[c] && (alloc == 0 || !srv[alloc - 1]) -> alloc = c + 1; END_STEP } \
	/* coordinator.go: a rebalancing moves it between live members */ \
	:: d_step { budget > 0 && alloc != c + 1 && srv[c] && alloc != 0 && srv[alloc - 1] -> \
		budget--; alloc = c + 1; END_STEP } \
	/* the process (re)starts with a new Session */ \
	:: d_step { budget > 0 && lsess[c] == OFF && !srv[c] -> budget--; \
		reset(c); lsess[c] = LIVE; srv[c] = 1; END_STEP } \
	/* the process crashes */ \
	:: d_step { budget > 0 && lsess[c] != OFF -> budget--; \
		reset(c); lsess[c] = OFF; paused[c] = 0; END_STEP } \
	/* a network partition */ \
	:: d_step { budget > 0 && lsess[c] == LIVE && !cut[c] -> budget--; cut[c] = 1; END_STEP } \
	/* an operator deletes the barrier by hand (zkCli, zkcoord barrier \
	 * rm): its owner, if it runs the resource, learns it from its watch */ \
	:: d_step { budget > 0 && barrier == c + 1 -> budget--; \
		if :: st[c] == RUN || st[c] == DLY -> revoked[c] = 1 :: else -> skip fi; \
		barrier_gone(); END_STEP } \
	/* a pause of at most PAUSE ticks */ \
	:: d_step { budget > 0 && lsess[c] != OFF && !paused[c] && !URGENT(c) -> budget--; \
		paused[c] = 1; pz[c] = PAUSE; END_STEP } \
	:: d_step { paused[c] -> paused[c] = 0; END_STEP }

active proctype Env() {
end:
	do
	ENV_MEMBER(0)
	ENV_MEMBER(1)
#if NC > 2
	ENV_MEMBER(2)
#endif
	od
}

/* Time passes while something counts it: a pause (which must end within
 * PAUSE ticks) or a lock-delay. */
#define COUNTING(c) (paused[c] || dl[c] > 0)
#define BLOCKS(c) (URGENT(c) || (paused[c] && pz[c] == 0))

inline tick1(c) {
	if :: paused[c] -> pz[c]-- :: else -> skip fi;
	if :: dl[c] > 0 -> dl[c]-- :: else -> skip fi
}

active proctype Clock() {
end:
	do
	:: d_step { (COUNTING(0) || COUNTING(1) || (NC > 2 && COUNTING(NC - 1))) &&
		!BLOCKS(0) && !BLOCKS(1) && !(NC > 2 && BLOCKS(NC - 1)) ->
		tick1(0); tick1(1);
#if NC > 2
		tick1(2);
#endif
		END_STEP }
	od
}

init {
	d_step {
		for (hi : 0 .. NC - 1) { lsess[hi] = LIVE; srv[hi] = 1 }
		END_STEP
	}
	atomic {
		for (hk : 0 .. NC - 1) { run Member(hk) }
	}
}
