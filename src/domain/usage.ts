/**
 * What a completed job produced, as its engine measured it: the quantities a metered price rule
 * (priced per output second, say) counts when the job is charged. Known only once the output
 * exists, so admission holds the most such a job can cost and completion charges what it made.
 */
export interface Usage {
  /** The main output's duration, in whole microseconds (a video's or a sound's length). */
  readonly outputUs: number;
}
