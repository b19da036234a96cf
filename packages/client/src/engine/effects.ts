/**
 * Which tab performs a "once per profile" effect (a sound, a desktop notification): the focused
 * tab, the one focused most recently if several claim focus, else the longest-attached tab.
 */

/** What the choice looks at. */
export interface EffectCandidate {
  focused: boolean;
  /** When the tab last gained focus, ms since the epoch (0: never). */
  focusedAt: number;
  /** Attach order: lower attached earlier. */
  order: number;
}

/** Picks the tab that performs an effect; undefined when there is none. Pure. */
export function pickEffectTab<T extends EffectCandidate>(tabs: Iterable<T>): T | undefined {
  let best: T | undefined;
  for (const t of tabs) {
    if (!best) best = t;
    else if (t.focused !== best.focused) best = t.focused ? t : best;
    else if (t.focused && t.focusedAt !== best.focusedAt) best = t.focusedAt > best.focusedAt ? t : best;
    else if (t.order < best.order) best = t;
  }
  return best;
}
