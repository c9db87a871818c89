package store

// The one place the store reads the work queue's own table: River's
// river_job (id, kind, state), to tell whether the unit a row runs under
// is still alive. The store never writes it; units are inserted through
// Queue.InsertTx, and River moves them through their states.

// liveUnitStates are River's states of a unit that may still run (the
// others, completed, cancelled and discarded, are final; River's cleaner
// deletes final units after a while, and a missing unit counts as final).
const liveUnitStates = "('available', 'pending', 'running', 'retryable', 'scheduled')"

// unitAlive is an SQL condition: the unit whose id is in column col (of
// the row being selected) is alive.
func unitAlive(col string) string {
	return "EXISTS (SELECT 1 FROM river_job r WHERE r.id = " + col + " AND r.state IN " + liveUnitStates + ")"
}

// River's kind of the job start unit (queue.KindJobStart).
const kindJobStart = "job_start"
