/**
 * Calls `fn` after `ms`; if the tab is hidden by then, once it is shown again instead, so a page
 * in a background tab sends no reads. Returns what cancels it. The console's live reads (the jobs
 * list, a job's pending webhook deliveries) wait with it.
 */
export function afterVisible(ms: number, fn: () => void): () => void {
  const onVisible = () => {
    if (document.hidden) return;
    document.removeEventListener('visibilitychange', onVisible);
    fn();
  };
  const timer = setTimeout(() => {
    if (!document.hidden) return fn();
    document.addEventListener('visibilitychange', onVisible);
  }, ms);
  return () => {
    clearTimeout(timer);
    document.removeEventListener('visibilitychange', onVisible);
  };
}
