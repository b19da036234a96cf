/**
 * The rows' time strings, formatted once per second of publishing time rather than once per
 * row: a burst's events share a handful of seconds, so a burst of 1,000 rows formats a few
 * strings. Rows arrive in time order, so remembering the last second is enough.
 */

const medium = new Intl.DateTimeFormat(undefined, { timeStyle: "medium" });

export interface TimeLabelOptions {
  /** Formats a time (ms since the epoch). @default the locale's medium time style, e.g. "14:03:07" */
  format?: (ms: number) => string;
}

export class TimeLabel {
  private readonly format: (ms: number) => string;
  private second = NaN;
  private label = "";

  constructor(options: TimeLabelOptions = {}) {
    // One Intl formatter for every row: toLocaleTimeString builds one per call.
    this.format = options.format ?? ((ms) => medium.format(ms));
  }

  /** The label of `ms`: the one of the previous call when both fall in the same second. */
  of(ms: number): string {
    const second = Math.floor(ms / 1000);
    if (second !== this.second) {
      this.second = second;
      this.label = this.format(ms);
    }
    return this.label;
  }
}
