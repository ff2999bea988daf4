/*
 * rebalance.pml: the rebalancer of package rebalance, in its three modes.
 *
 * Mode (one per verification run):
 *   default         incremental: resource barriers, sticky allocation
 *   -DMODE_RESOURCE resource barrier: balanced allocation, every resource
 *                   restarts on a new allocation
 *   -DMODE_GLOBAL   global barrier: StopActivity, check-ins, allocation,
 *                   ResourcesAssigned, check-outs, StartConfirmed
 *
 * Size: NC clients, NR resources (NC, NR <= 3), FAULTS faults at most.
 *
 * Broken variants (each must yield a counterexample):
 *   -DBROKEN_BARRIER_WITH_RESOURCE  RemoveResource also deletes the
 *                   resource's barrier (the defect the original design's
 *                   TLA+ model found)
 *   -DNO_SELF_EXPIRY the Session never declares itself Lost: a partitioned
 *                   member keeps its resources until it hears of the expiry
 *   -DNO_TERM_CHECK  allocation writes are not conditional on the term
 *   -DNO_STOP_BEFORE_DELETE the member deletes a lost resource's barrier
 *                   before Unassigned has returned (executor order swapped)
 * -DMUTEX_ONLY leaves out the barrier invariant, so that a broken variant
 * is shown to end in a double access, not only in a use without barrier.
 *
 * Every process step is one d_step: one ZooKeeper request (or one atomic
 * multi) or one local decision of the Go code, named in the comment above
 * it as file.go function. Watches are flags set by the write that fires
 * them and consumed by a later step of the watcher, so notifications
 * arrive arbitrarily late.
 *
 * Abstractions: client nodes are ordered by client index (a rejoining
 * client keeps its rank); a process restart reuses its index once the old
 * session has expired; ZooKeeper's zxid is one global counter; a handler's
 * work on a resource is one "use" sent to a fenced service.
 */

#ifndef NC
#define NC 3
#endif
#ifndef NR
#define NR 2
#endif
#ifndef FAULTS
#define FAULTS 2
#endif

#if defined(MODE_GLOBAL)
#define GLOBAL 1
#define STICKY 0
#elif defined(MODE_RESOURCE)
#define GLOBAL 0
#define STICKY 0
#else
#define GLOBAL 0
#define STICKY 1
#endif

/* Session as the client process sees it (session.go). */
#define OFF  0 /* no process, or the process ended its Session */
#define LIVE 1 /* Connected, Suspended or Reconnected */
#define LOST 2 /* Lost (or Expired) declared: Session.Done closed */

/* Slot states (member.go slotState). */
#define NONE     0
#define ACQ      1 /* acquiring: waiting for the old barrier to go */
#define RUN      2 /* starting/active: barrier held, Assigned called */
#define STOPPING 3 /* context cancelled, Unassigned not yet returned */

/* Global-barrier status phases (global.go). */
#define PH_NONE     0
#define PH_STOP     1
#define PH_ASSIGNED 2
#define PH_CONFIRM  3

#define IX(c, r) ((c) * NR + (r))

/* ---- ZooKeeper's state ---- */
bit  member[NC];     /* clients/<id>, ephemeral */
bit  srv[NC];        /* the client's ZooKeeper session is alive at the server */
bit  registered[NR]; /* resources/<r> */
byte barrier[NR];    /* barriers/<r>: owner client + 1, 0 when absent */
byte btok[NR];       /* its czxid: the fencing token */
byte zxid;
byte term;           /* version of the term node */
byte aowner[NR];     /* allocation (data of resources/): owner + 1 */
byte agen;           /* its generation; also the node's data version */
byte sphase;         /* global mode: status node */
byte sgen;
byte checkin[NC];    /* global mode: stopped/<id>.<gen>, 0 when absent */

/* ---- each client process ---- */
byte lsess[NC];
bit  cut[NC];        /* partitioned from every server */
bit  paused[NC];     /* process paused (GC, SIGSTOP) */
bit  stale[NC];      /* ghost: its session expired while it was paused */
bit  closing[NC];    /* member.close: stopping everything */
/* coordinator (role.go, coordinator.go, global.go) */
bit  coord[NC];
byte myterm[NC];
bit  pending[NC];
byte rb[NC];         /* 0 idle; 1 read (or StopActivity written); 2 ResourcesAssigned written */
byte rbver[NC];      /* version of resources/ read by the rebalancing */
byte rbgen[NC];      /* global mode: generation of the rebalancing */
bit  rbmem[NC * NC]; /* global mode: the clients it waits for */
byte nx[NC * NR];    /* the next allocation it computed */
/* member (member.go) */
bit  anotify[NC];    /* data watch on resources/ (or status) fired */
bit  want[NC * NR];  /* desired: allocated to this client */
byte mgen[NC];       /* generation of the allocation it follows */
bit  stopall[NC];    /* global mode: StopActivity seen */
byte mphase[NC];
byte checked[NC];    /* global mode: generation of its check-in */
byte slot[NC * NR];
byte slotgen[NC * NR];
byte tok[NC * NR];
bit  used[NC * NR];  /* this holding has used the resource */
/* the fenced resource service: largest token it has accepted */
byte svc[NR];

byte budget = FAULTS;
/* ghosts for the LTL properties */
bit  bal;
bit  rbany;

hidden byte hi, hj, hk, hm, hn, hq, hx, hy;
hidden byte kept[NC];
hidden byte target[NC];

#define RUNNING(c, r) (slot[IX(c, r)] == RUN || slot[IX(c, r)] == STOPPING)
/* The process runs and believes its session alive. */
#define UP(c)    (lsess[c] == LIVE && !paused[c])
/* The process runs (its member loop too, after a loss). */
#define RUNS(c)  (lsess[c] != OFF && !paused[c])
/* Its requests reach the server and are answered. */
#define REACH(c) (UP(c) && !cut[c] && srv[c])
#define LOWEST(c) ((c) == 0 || (!member[0] && ((c) == 1 || (!member[1] && ((c) == 2 || !member[2])))))

#if NR > 2
#define ANYR(P, c) (P(c, 0) || P(c, 1) || P(c, 2))
#define ALLR(P, c) (P(c, 0) && P(c, 1) && P(c, 2))
#else
#define ANYR(P, c) (P(c, 0) || P(c, 1))
#define ALLR(P, c) (P(c, 0) && P(c, 1))
#endif
#if NC > 2
#define ALLC(P, c) (P(c, 0) && P(c, 1) && P(c, 2))
#else
#define ALLC(P, c) (P(c, 0) && P(c, 1))
#endif

#define DRAIN1(c, r)   (slot[IX(c, r)] != NONE && slotgen[IX(c, r)] != mgen[c])
#define NOSLOT1(c, r)  (slot[IX(c, r)] == NONE)
#define IDLE1(c, r)    (!RUNNING(c, r))
#define SETTLE1(c, r)  ((want[IX(c, r)] && slot[IX(c, r)] == RUN) || (!want[IX(c, r)] && slot[IX(c, r)] == NONE))
#define CHECKED1(c, j) (!rbmem[IX2(c, j)] || checkin[j] == rbgen[c])
#define OUT1(c, j)     (!rbmem[IX2(c, j)] || checkin[j] != rbgen[c])
#define IX2(c, j) ((c) * NC + (j))

/* A member must give up slot r now (member.go dropCause). */
#define MUSTDROP(c, r) (closing[c] || stopall[c] || !want[IX(c, r)] || \
	(!STICKY && slotgen[IX(c, r)] != mgen[c]))

/* Invariants, checked after every step:
 * mutual exclusion: at most one client whose process runs, and whose
 *   session did not expire while it was paused, runs each resource;
 * no use after the barrier is gone: such a client runs a resource only
 *   while the resource's barrier is its own (same token). */
inline check() {
	for (hi : 0 .. NR - 1) {
		hk = 0;
		for (hj : 0 .. NC - 1) {
			if
			:: RUNNING(hj, hi) && !paused[hj] && !stale[hj] ->
				hk++;
#ifndef MUTEX_ONLY
				assert(barrier[hi] == hj + 1 && btok[hi] == tok[IX(hj, hi)])
#endif
				skip
			:: else -> skip
			fi
		}
		assert(hk <= 1)
	}
}

/* bal: the group is settled and balanced: every live member runs exactly
 * its share, the shares differ by at most one, every registered resource
 * is run by exactly one member and nothing else is run; rbany: some
 * coordinator is in a rebalancing. */
inline update() {
	bal = 1;
	hx = 255; hy = 0; hm = 0;
	for (hj : 0 .. NC - 1) {
		if
		:: lsess[hj] == OFF -> skip
		:: lsess[hj] != OFF && REACH(hj) && member[hj] && !closing[hj] ->
			hm++;
			hn = 0;
			for (hi : 0 .. NR - 1) {
				if
				:: slot[IX(hj, hi)] == RUN && registered[hi] -> hn++
				:: slot[IX(hj, hi)] == NONE -> skip
				:: else -> bal = 0
				fi
			}
			if :: hn < hx -> hx = hn :: else -> skip fi;
			if :: hn > hy -> hy = hn :: else -> skip fi
		:: else -> bal = 0 /* losing its session, leaving, paused or cut off */
		fi
	}
	if :: hm > 0 && hy > hx + 1 -> bal = 0 :: else -> skip fi;
	for (hi : 0 .. NR - 1) {
		hk = 0;
		for (hj : 0 .. NC - 1) {
			if :: slot[IX(hj, hi)] == RUN -> hk++ :: else -> skip fi
		}
		if :: hm > 0 && registered[hi] && hk != 1 -> bal = 0 :: else -> skip fi
	}
	rbany = 0;
	for (hj : 0 .. NC - 1) {
		if :: rb[hj] > 0 -> rbany = 1 :: else -> skip fi
	}
}

#define END_STEP check(); update(); skip

/* Every coordinator that is running is told (watches on clients/ and
 * resources/ in coordinator.go coordinate: trigger). */
inline trigger() {
	for (hj : 0 .. NC - 1) {
		if :: coord[hj] -> pending[hj] = 1 :: else -> skip fi
	}
}

/* Every member's data watch on resources/ (or status) fires. */
inline notify_members() {
	for (hj : 0 .. NC - 1) {
		if :: lsess[hj] != OFF -> anotify[hj] = 1 :: else -> skip fi
	}
}

/* alloc/balance.go Sticky (Balanced is Sticky with no previous
 * allocation): owners still alive keep what they have up to their target;
 * targets are q or q+1, the extra ones going to the members that kept most
 * (ties by id); the rest is handed out in resource order, members in id
 * order. Uses the server's view, as readGroup does. */
inline compute_next(c) {
	hm = 0; hn = 0;
	for (hi : 0 .. NC - 1) {
		kept[hi] = 0; target[hi] = 0;
		if :: member[hi] -> hm++ :: else -> skip fi
	}
	for (hi : 0 .. NR - 1) {
		nx[IX(c, hi)] = 0;
		if :: registered[hi] -> hn++ :: else -> skip fi
	}
	if
	:: hm > 0 ->
		for (hi : 0 .. NR - 1) {
			if
			:: STICKY && registered[hi] && aowner[hi] > 0 && member[aowner[hi] - 1] ->
				nx[IX(c, hi)] = aowner[hi];
				kept[aowner[hi] - 1]++
			:: else -> skip
			fi
		}
		hq = hn / hm;
		hk = hn % hm;
		for (hi : 0 .. NC - 1) {
			if :: member[hi] -> target[hi] = hq :: else -> skip fi
		}
		hx = NR + 1;
		do
		:: hk > 0 && hx > 0 ->
			hx--;
			for (hi : 0 .. NC - 1) {
				if
				:: hk > 0 && member[hi] && kept[hi] == hx -> target[hi]++; hk--
				:: else -> skip
				fi
			}
		:: else -> break
		od;
		for (hi : 0 .. NC - 1) { kept[hi] = 0 }
		for (hi : 0 .. NR - 1) {
			if
			:: nx[IX(c, hi)] > 0 ->
				hx = nx[IX(c, hi)] - 1;
				if
				:: kept[hx] < target[hx] -> kept[hx]++
				:: else -> nx[IX(c, hi)] = 0
				fi
			:: else -> skip
			fi
		}
		hx = 0;
		for (hi : 0 .. NR - 1) {
			if
			:: registered[hi] && nx[IX(c, hi)] == 0 ->
				do
				:: hx < NC && !(member[hx] && kept[hx] < target[hx]) -> hx++
				:: else -> break
				od;
				assert(hx < NC);
				nx[IX(c, hi)] = hx + 1;
				kept[hx]++
			:: else -> skip
			fi
		}
	:: else -> skip
	fi
}

/* The coordinator's rebalancing state is dropped (abort, failure, end of
 * the role); the scratch copies are cleared so that they add no states. */
inline rb_clear(c) {
	rb[c] = 0; rbver[c] = 0; rbgen[c] = 0;
	for (hi : 0 .. NR - 1) { nx[IX(c, hi)] = 0 }
	for (hi : 0 .. NC - 1) { rbmem[IX2(c, hi)] = 0 }
}

/* The role ends (role.go run returns). */
inline role_end(c) {
	coord[c] = 0; myterm[c] = 0; pending[c] = 0;
	rb_clear(c)
}

/* A fresh process state (client.go connect/join), or a dead one. */
inline reset_local(c) {
	role_end(c);
	closing[c] = 0; anotify[c] = 0; mgen[c] = 0; stopall[c] = 0;
	mphase[c] = 0; checked[c] = 0; stale[c] = 0; cut[c] = 0;
	for (hi : 0 .. NR - 1) {
		want[IX(c, hi)] = 0; slot[IX(c, hi)] = NONE; slotgen[IX(c, hi)] = 0;
		tok[IX(c, hi)] = 0; used[IX(c, hi)] = 0
	}
}

/* ---- per-resource member steps, one option each ---- */
#define MEMBER_STEPS(r) \
	/* member.go reconcile/drop: a running resource must go: cancel its \
	 * context and queue Unassigned (and the barrier's deletion) */ \
	:: d_step { RUNS(c) && slot[IX(c, r)] == RUN && MUSTDROP(c, r) -> \
		slot[IX(c, r)] = STOPPING; END_STEP } \
	/* member.go drop: an acquisition that is no longer wanted is cancelled */ \
	:: d_step { RUNS(c) && slot[IX(c, r)] == ACQ && MUSTDROP(c, r) -> \
		slot[IX(c, r)] = NONE; slotgen[IX(c, r)] = 0; END_STEP } \
	/* member.go reconcile/acquire: a gained resource; barrier.go \
	 * acquireBarrier finds the barrier taken and waits (ExistsW) */ \
	:: d_step { UP(c) && slot[IX(c, r)] == NONE && want[IX(c, r)] && !closing[c] && \
		!stopall[c] && (STICKY || !ANYR(DRAIN1, c)) && barrier[r] != 0 -> \
		slot[IX(c, r)] = ACQ; slotgen[IX(c, r)] = mgen[c]; END_STEP } \
	/* barrier.go acquireBarrier: create barriers/<r> (ephemeral) while no \
	 * barrier exists; then executor.go do: Assigned(ctx, token) */ \
	:: d_step { REACH(c) && barrier[r] == 0 && \
		(slot[IX(c, r)] == ACQ || (slot[IX(c, r)] == NONE && want[IX(c, r)] && !closing[c] && \
		 !stopall[c] && (STICKY || !ANYR(DRAIN1, c)))) -> \
		slotgen[IX(c, r)] = mgen[c]; \
		zxid++; barrier[r] = c + 1; btok[r] = zxid; \
		tok[IX(c, r)] = zxid; used[IX(c, r)] = 0; slot[IX(c, r)] = RUN; END_STEP } \
	STOP_STEPS(r) \
	/* the Handler uses the resource, passing its token to a fenced \
	 * service that refuses tokens older than the newest it accepted */ \
	:: d_step { !paused[c] && lsess[c] != OFF && RUNNING(c, r) && !used[IX(c, r)] -> \
		used[IX(c, r)] = 1; \
		if \
		:: tok[IX(c, r)] >= svc[r] -> svc[r] = tok[IX(c, r)] \
		:: else -> assert(stale[c]) /* only a holder that outlived its session is refused */ \
		fi; END_STEP }

#ifndef NO_STOP_BEFORE_DELETE
#define STOP_STEPS(r) \
	/* executor.go do: Unassigned returns, then barrier.go releaseBarrier \
	 * deletes the barrier if it is still ours (same czxid) */ \
	:: d_step { REACH(c) && slot[IX(c, r)] == STOPPING -> \
		if :: barrier[r] == c + 1 && btok[r] == tok[IX(c, r)] -> barrier[r] = 0 :: else -> skip fi; \
		slot[IX(c, r)] = NONE; slotgen[IX(c, r)] = 0; tok[IX(c, r)] = 0; used[IX(c, r)] = 0; END_STEP } \
	/* executor.go do after a loss: Unassigned returns; the barrier is left \
	 * to the server (job.del is false once m.lost) */ \
	:: d_step { !paused[c] && lsess[c] == LOST && slot[IX(c, r)] == STOPPING -> \
		slot[IX(c, r)] = NONE; slotgen[IX(c, r)] = 0; tok[IX(c, r)] = 0; used[IX(c, r)] = 0; END_STEP }
#else
#define STOP_STEPS(r) \
	/* broken: the barrier is deleted first, Unassigned returns later */ \
	:: d_step { REACH(c) && slot[IX(c, r)] == STOPPING && barrier[r] == c + 1 && btok[r] == tok[IX(c, r)] -> \
		barrier[r] = 0; END_STEP } \
	:: d_step { !paused[c] && lsess[c] != OFF && slot[IX(c, r)] == STOPPING && \
		!(barrier[r] == c + 1 && btok[r] == tok[IX(c, r)]) -> \
		slot[IX(c, r)] = NONE; slotgen[IX(c, r)] = 0; tok[IX(c, r)] = 0; used[IX(c, r)] = 0; END_STEP } \
	:: d_step { !paused[c] && lsess[c] == LOST && slot[IX(c, r)] == STOPPING -> \
		slot[IX(c, r)] = NONE; slotgen[IX(c, r)] = 0; tok[IX(c, r)] = 0; used[IX(c, r)] = 0; END_STEP }
#endif

proctype Client(byte c) {
end:
	do
	/* ---- the Session (session.go) ---- */
#ifndef NO_SELF_EXPIRY
	/* Session.checkSilence: no reply for LostAfter x T: declare Lost; or
	 * Expired reported. member.run then closes: every resource stops. */
	:: d_step { UP(c) && (cut[c] || !srv[c]) ->
		lsess[c] = LOST; closing[c] = 1; role_end(c); END_STEP }
#else
	/* broken: only the server's expiry ends the Session */
	:: d_step { UP(c) && !srv[c] ->
		lsess[c] = LOST; closing[c] = 1; role_end(c); END_STEP }
#endif
	/* member.run ends after a loss; the process's Session is over */
	:: d_step { !paused[c] && lsess[c] == LOST && ALLR(NOSLOT1, c) ->
		lsess[c] = OFF; checked[c] = 0; mphase[c] = 0; stopall[c] = 0; mgen[c] = 0;
		anotify[c] = 0; closing[c] = 0;
		for (hi : 0 .. NR - 1) { want[IX(c, hi)] = 0 }
		END_STEP }
	/* member.run ends after Close or a role failure: Session.Close deletes
	 * the ephemeral nodes (the check-in is deleted by member.run first) */
	:: d_step { REACH(c) && closing[c] && ALLR(NOSLOT1, c) ->
		member[c] = 0; srv[c] = 0; checkin[c] = 0;
		lsess[c] = OFF; reset_local(c); trigger(); END_STEP }

	/* ---- the role: election and coordinator ---- */
	/* role.go watchOwn: the client node was deleted: ErrMembershipLost */
	:: d_step { REACH(c) && !member[c] && !closing[c] ->
		closing[c] = 1; role_end(c); END_STEP }
	/* role.go elect: lowest client node; coordinator.go bumpTerm */
	:: d_step { REACH(c) && member[c] && !coord[c] && !closing[c] && LOWEST(c) ->
		term++; myterm[c] = term; coord[c] = 1; pending[c] = 1; END_STEP }
	/* coordinator.go coordinate: the term watch fires: ErrDeposed */
	:: d_step { UP(c) && coord[c] && term != myterm[c] ->
		closing[c] = 1; role_end(c); END_STEP }
	/* coordinator.go coordinate trigger: a change aborts the running
	 * rebalancing; pending stays set, so another one follows */
	:: d_step { UP(c) && coord[c] && rb[c] > 0 && pending[c] ->
		rb_clear(c); END_STEP }
#if !GLOBAL
	/* coordinator.go rebalance: readGroup and alloc.Sticky/Balanced;
	 * nothing to write if the allocation would not change */
	:: d_step { REACH(c) && coord[c] && pending[c] && rb[c] == 0 ->
		pending[c] = 0;
		compute_next(c);
		hk = 1;
		for (hi : 0 .. NR - 1) {
			if :: nx[IX(c, hi)] != aowner[hi] -> hk = 0 :: else -> skip fi
		}
		if
		:: hk -> rb_clear(c)
		:: else -> rb[c] = 1; rbver[c] = agen
		fi;
		END_STEP }
	/* coordinator.go writeAllocation/guardedSet: multi(check term version,
	 * set resources/ at the version read) */
	:: d_step { REACH(c) && coord[c] && rb[c] == 1 ->
		if
#ifndef NO_TERM_CHECK
		:: term != myterm[c] -> closing[c] = 1; role_end(c) /* ErrDeposed */
#endif
		:: else ->
			if
			:: agen != rbver[c] -> pending[c] = 1; rb_clear(c) /* errConflict: retried */
			:: else ->
				/* property: only the coordinator of the current term writes */
				assert(term == myterm[c]);
				for (hi : 0 .. NR - 1) { aowner[hi] = nx[IX(c, hi)] }
				agen++;
				notify_members();
				rb_clear(c)
			fi
		fi;
		END_STEP }
#else
	/* global.go rebalanceGlobal: readGroup, read status, compute
	 * alloc.Balanced; if anything changed, status := StopActivity(g)
	 * (guardedSet) */
	:: d_step { REACH(c) && coord[c] && pending[c] && rb[c] == 0 ->
		pending[c] = 0;
		compute_next(c);
		hk = 1;
		for (hi : 0 .. NR - 1) {
			if :: nx[IX(c, hi)] != aowner[hi] -> hk = 0 :: else -> skip fi
		}
		if
		:: hk && sphase == PH_CONFIRM && sgen == agen -> rb_clear(c)
		:: else ->
			if
#ifndef NO_TERM_CHECK
			:: term != myterm[c] -> closing[c] = 1; role_end(c) /* ErrDeposed */
#endif
			:: else ->
				assert(term == myterm[c]);
				rb[c] = 1; rbver[c] = agen;
				if :: agen > sgen -> rbgen[c] = agen + 1 :: else -> rbgen[c] = sgen + 1 fi;
				sphase = PH_STOP; sgen = rbgen[c];
				for (hi : 0 .. NC - 1) { rbmem[IX2(c, hi)] = member[hi] }
				notify_members()
			fi
		fi;
		END_STEP }
	/* global.go awaitCheckIns(all): every client checked in; then
	 * writeAllocation and status := ResourcesAssigned(g), both guarded */
	:: d_step { REACH(c) && coord[c] && rb[c] == 1 && ALLC(CHECKED1, c) ->
		if
#ifndef NO_TERM_CHECK
		:: term != myterm[c] -> closing[c] = 1; role_end(c)
#endif
		:: else ->
			if
			:: agen != rbver[c] -> pending[c] = 1; rb_clear(c)
			:: else ->
				assert(term == myterm[c]);
				for (hi : 0 .. NR - 1) { aowner[hi] = nx[IX(c, hi)] }
				agen = rbgen[c];
				sphase = PH_ASSIGNED;
				rb[c] = 2;
				notify_members()
			fi
		fi;
		END_STEP }
	/* global.go awaitCheckIns(none): every check-in is gone; status :=
	 * StartConfirmed(g) */
	:: d_step { REACH(c) && coord[c] && rb[c] == 2 && ALLC(OUT1, c) ->
		if
#ifndef NO_TERM_CHECK
		:: term != myterm[c] -> closing[c] = 1; role_end(c)
#endif
		:: else ->
			assert(term == myterm[c]);
			sphase = PH_CONFIRM;
			notify_members();
			rb_clear(c)
		fi;
		END_STEP }
#endif

	/* ---- the member ---- */
#if !GLOBAL
	/* member.go watchRecord/setRecord: read the allocation */
	:: d_step { REACH(c) && anotify[c] ->
		anotify[c] = 0;
		mgen[c] = agen;
		for (hi : 0 .. NR - 1) { want[IX(c, hi)] = (aowner[hi] == c + 1) }
		END_STEP }
#else
	/* global.go watchStatus/onStatus: read the status and, past
	 * StopActivity, the allocation of that generation */
	:: d_step { REACH(c) && anotify[c] ->
		anotify[c] = 0;
		if
		:: sphase == PH_STOP ->
			stopall[c] = 1; mgen[c] = sgen; mphase[c] = sphase;
			for (hi : 0 .. NR - 1) { want[IX(c, hi)] = 0 }
		:: sphase > PH_STOP && agen == sgen ->
			stopall[c] = 0; mgen[c] = agen; mphase[c] = sphase;
			for (hi : 0 .. NR - 1) { want[IX(c, hi)] = (aowner[hi] == c + 1) }
		:: else -> skip
		fi;
		END_STEP }
	/* global.go checkpoint: everything stopped during StopActivity:
	 * check in (stopped/<id>.<g>) */
	:: d_step { REACH(c) && !closing[c] && mphase[c] == PH_STOP && checked[c] != mgen[c] &&
		ALLR(NOSLOT1, c) ->
		checkin[c] = mgen[c]; checked[c] = mgen[c]; END_STEP }
	/* global.go checkpoint: own share started: check out */
	:: d_step { REACH(c) && !closing[c] && mphase[c] > PH_STOP && checked[c] != 0 &&
		ALLR(SETTLE1, c) ->
		if :: checkin[c] == checked[c] -> checkin[c] = 0 :: else -> skip fi;
		checked[c] = 0; END_STEP }
#endif
	MEMBER_STEPS(0)
	MEMBER_STEPS(1)
#if NR > 2
	MEMBER_STEPS(2)
#endif
	od
}

/* Expiry with self-expiry: the server expires a session no earlier than T
 * after it last heard from the client; the client declared Lost at
 * LostAfter x T and its handlers returned within the margin, unless the
 * process crashed or was paused. */
#ifndef NO_SELF_EXPIRY
#define EXPIRABLE(c) (srv[c] && (lsess[c] == OFF || paused[c] || (lsess[c] == LOST && ALLR(IDLE1, c))))
#else
#define EXPIRABLE(c) (srv[c] && (lsess[c] == OFF || paused[c] || cut[c]))
#endif

inline expire(c) {
	srv[c] = 0; member[c] = 0; checkin[c] = 0;
	for (hi : 0 .. NR - 1) {
		if :: barrier[hi] == c + 1 -> barrier[hi] = 0 :: else -> skip fi
	}
	if :: paused[c] && ANYR(RUNNING, c) -> stale[c] = 1 :: else -> skip fi;
	trigger()
}

/* ZooKeeper: session expiry deletes the session's ephemeral nodes
 * (client node, barriers, check-in) and fires the watches on them. */
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

/* Faults and operator actions, FAULTS of them at most. */
#define ENV_CLIENT(c) \
	/* client.go connect/join: a (re)started client registers */ \
	:: d_step { budget > 0 && lsess[c] == OFF && !srv[c] -> budget--; \
		reset_local(c); lsess[c] = LIVE; srv[c] = 1; member[c] = 1; anotify[c] = 1; \
		trigger(); END_STEP } \
	/* Client.Close */ \
	:: d_step { budget > 0 && UP(c) && !closing[c] -> budget--; \
		closing[c] = 1; role_end(c); END_STEP } \
	/* the process crashes (SIGKILL): its session lives on until expiry */ \
	:: d_step { budget > 0 && lsess[c] != OFF -> budget--; \
		reset_local(c); lsess[c] = OFF; paused[c] = 0; END_STEP } \
	/* a network partition: no request reaches any server any more */ \
	:: d_step { budget > 0 && lsess[c] == LIVE && !cut[c] -> budget--; cut[c] = 1; END_STEP } \
	/* the process is paused (GC, SIGSTOP), for any length of time */ \
	:: d_step { budget > 0 && lsess[c] != OFF && !paused[c] -> budget--; paused[c] = 1; END_STEP } \
	:: d_step { paused[c] -> paused[c] = 0; END_STEP } \
	/* an operator deletes the client's node */ \
	:: d_step { budget > 0 && member[c] -> budget--; member[c] = 0; trigger(); END_STEP }

#define ENV_RESOURCE(r) \
	/* operator.go AddResource */ \
	:: d_step { budget > 0 && !registered[r] -> budget--; registered[r] = 1; trigger(); END_STEP } \
	/* operator.go RemoveResource: never touches the barrier */ \
	:: d_step { budget > 0 && registered[r] -> budget--; registered[r] = 0; \
		REMOVE_BARRIER(r); trigger(); END_STEP }

#ifdef BROKEN_BARRIER_WITH_RESOURCE
#define REMOVE_BARRIER(r) barrier[r] = 0
#else
#define REMOVE_BARRIER(r) skip
#endif

active proctype Env() {
	do
	ENV_CLIENT(0)
	ENV_CLIENT(1)
#if NC > 2
	ENV_CLIENT(2)
#endif
	ENV_RESOURCE(0)
	ENV_RESOURCE(1)
#if NR > 2
	ENV_RESOURCE(2)
#endif
	/* faults stop (nobody stays paused) */
	:: !paused[0] && !paused[1] && (NC < 3 || !paused[NC - 1]) -> break
	od
}

/* When nothing can move any more (faults over, every process blocked),
 * the group must be balanced and no rebalancing may be left hanging:
 * a deadlock is caught by the safety run, which a search with weak
 * fairness would not report. */
active proctype Quiet() {
	timeout -> assert(bal && !rbany)
}

init {
	d_step {
		for (hi : 0 .. NC - 1) {
			lsess[hi] = LIVE; srv[hi] = 1; member[hi] = 1; anotify[hi] = 1
		}
		for (hi : 0 .. NR - 1) { registered[hi] = 1 }
		END_STEP
	}
	atomic {
		for (hq : 0 .. NC - 1) { run Client(hq) }
	}
}

/* With faults stopped and weak fairness, the group ends up balanced and
 * stays so. */
ltl eventually_balanced { <> [] bal }
/* Every started rebalancing ends: it completes, or it is aborted (and a
 * pending change starts the next) or its coordinator's role ends. */
ltl rebalancing_ends { [] (rbany -> <> !rbany) }
