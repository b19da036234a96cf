/**
 * What a tab's frame costs, from a Chrome trace (devtools.timeline): for every renderer main
 * thread, each frame (`WebFrameWidgetImpl::UpdateLifecycle`) split into its style, layout,
 * pre-paint, paint and layerize steps, in thread CPU (`tdur`, so the load average matters less
 * than for wall time), with the elements styled and the objects laid out in it.
 */

export interface TraceEvent {
  name: string;
  ph: string;
  pid: number;
  tid: number;
  ts: number;
  dur?: number;
  tdur?: number;
  args?: {
    name?: string;
    elementCount?: number;
    beginData?: { dirtyObjects?: number; totalObjects?: number };
  };
}

/** The steps of a frame, as the trace names them. */
const STEPS = ["UpdateLayoutTree", "Layout", "PrePaint", "Paint", "Layerize"] as const;

export interface Frame {
  cpuMs: number;
  steps: Record<(typeof STEPS)[number], number>;
  /** Elements whose style was recalculated. */
  styled: number;
  /** Layout objects marked dirty / in the tree when layout started. */
  dirty: number;
  total: number;
}

/** The frames of each renderer main thread that drew anything, in time order. */
export function framesByTab(events: TraceEvent[]): Frame[][] {
  const mains = new Set(events.filter((e) => e.ph === "M" && e.name === "thread_name" && e.args?.name === "CrRendererMain").map((e) => `${e.pid}:${e.tid}`));
  const byThread = new Map<string, TraceEvent[]>();
  for (const e of events) {
    const key = `${e.pid}:${e.tid}`;
    if (e.ph !== "X" || !mains.has(key)) continue;
    (byThread.get(key) ?? byThread.set(key, []).get(key)!).push(e);
  }
  const tabs: Frame[][] = [];
  for (const list of byThread.values()) {
    list.sort((a, b) => a.ts - b.ts);
    const frames: Frame[] = [];
    for (const f of list) {
      if (f.name !== "WebFrameWidgetImpl::UpdateLifecycle" || f.dur === undefined) continue;
      const end = f.ts + f.dur;
      const inside = list.filter((e) => e.ts >= f.ts && e.ts + (e.dur ?? 0) <= end && e !== f);
      const steps = Object.fromEntries(STEPS.map((s) => [s, 0])) as Frame["steps"];
      const frame: Frame = { cpuMs: (f.tdur ?? f.dur) / 1000, steps, styled: 0, dirty: 0, total: 0 };
      for (const e of inside) {
        if ((STEPS as readonly string[]).includes(e.name)) steps[e.name as keyof Frame["steps"]] += (e.tdur ?? e.dur ?? 0) / 1000;
        if (e.name === "UpdateLayoutTree") frame.styled += e.args?.elementCount ?? 0;
        if (e.name === "Layout") {
          frame.dirty += e.args?.beginData?.dirtyObjects ?? 0;
          frame.total = Math.max(frame.total, e.args?.beginData?.totalObjects ?? 0);
        }
      }
      if (frame.styled > 0 || frame.dirty > 0) frames.push(frame);
    }
    if (frames.length > 0) tabs.push(frames);
  }
  return tabs;
}

/** Prints every tab's frames in one table: CPU per step, and per layout object laid out. */
export function printFrames(events: TraceEvent[]): void {
  const tabs = framesByTab(events);
  console.log(`\n## Frames that changed the DOM, per tab (thread CPU, ms; ${tabs.length} tabs)\n`);
  console.log(`| tab | frame | CPU | ${STEPS.join(" | ")} | styled | dirty / total objects | µs per dirty object (style+layout) |`);
  console.log(`|--:|--:|--:|${STEPS.map(() => "--:").join("|")}|--:|--:|--:|`);
  tabs.forEach((frames, t) =>
    frames.forEach((f, i) => {
      const perObject = f.dirty > 0 ? ((1000 * (f.steps.UpdateLayoutTree + f.steps.Layout)) / f.dirty).toFixed(1) : "-";
      console.log(`| ${t + 1} | ${i + 1} | ${f.cpuMs.toFixed(1)} | ${STEPS.map((s) => f.steps[s].toFixed(1)).join(" | ")} | ${f.styled} | ${f.dirty} / ${f.total} | ${perObject} |`);
    }),
  );
}
