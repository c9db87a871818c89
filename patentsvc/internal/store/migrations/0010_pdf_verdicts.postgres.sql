-- A patent PDF past one of the limits on reading a document
-- (PDF_EXTRACT_TIMEOUT, PDF_MAX_PAGES, PDF_MAX_DECODED_MB; decisions.md,
-- "work every replica shares, bounded and fair") is not read again: the
-- verdict ("document not read: more than 500 pages") is kept with the
-- stored PDF, with the limits it was read under (a verdict under other
-- limits is read again).
ALTER TABLE patents ADD COLUMN pdf_verdict TEXT;
ALTER TABLE patents ADD COLUMN pdf_limits TEXT;
