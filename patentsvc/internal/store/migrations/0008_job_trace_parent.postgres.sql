-- The W3C traceparent of the request that submitted a job (decisions.md,
-- "Tracing (issue 13)"): the job's run is a root span of its own, linked to
-- that request's span. NULL when tracing was off or the request was not
-- traced, and for the jobs stored before this column.
ALTER TABLE jobs ADD COLUMN trace_parent TEXT;
