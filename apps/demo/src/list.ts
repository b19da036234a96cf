/**
 * The demo's notification list: rows in arrival order (shown newest first by the CSS), at most
 * as many as the feed keeps. New items are rendered in one DOM update: the first after a quiet
 * spell at once, then during a burst at most every RENDER_INTERVAL_MS. A tab's frame (style,
 * layout, paint) costs about as much for a few rows as for a hundred, so a burst costs a few
 * frames per tab instead of one per batch (the client sends one every 16 ms); rows that the
 * same update would trim again are never built. A timer, not requestAnimationFrame: a tab in
 * the background gets no frames, but its unread count and title still change.
 */
import type { FeedItem } from "@tidemark/client";
import { TimeLabel } from "./time-label.js";

export interface Note {
  text: string;
}

export interface ListOptions {
  /** The `<ol>` the rows go into. */
  list: HTMLOListElement;
  /** How many rows to keep: the feed's current item count (it is bounded by `historyLimit`). */
  keep(): number;
  /** False for rows to mark unread (the user's read state, from the feed). */
  isRead(item: FeedItem<Note>): boolean;
  /** Called after each update of the rows (the unread count, the empty note). */
  rendered?(): void;
}

/** Shortest time between two updates of the list during a burst. */
export const RENDER_INTERVAL_MS = 100;

function renderItem(item: FeedItem<Note>, isRead: (item: FeedItem<Note>) => boolean, times: TimeLabel): HTMLLIElement {
  const li = document.createElement("li");
  li.dataset.n = String(item.n);
  if (item.kind === "gap") {
    li.className = "gap";
    li.dataset.testid = "gap-marker";
    li.textContent = `Some notifications may be missing here (${item.reason.replace("_", " ")}).`;
    return li;
  }
  li.dataset.testid = "notification";
  li.dataset.eventId = item.event.eventId;
  if (!isRead(item)) li.className = "unread";
  const text = document.createElement("span");
  text.textContent = item.event.data?.text ?? JSON.stringify(item.event.data);
  const time = document.createElement("time");
  time.textContent = times.of(item.event.publishedAt);
  li.append(time, text);
  return li;
}

export class NotificationList {
  private pending: FeedItem<Note>[] = [];
  private timer: ReturnType<typeof setTimeout> | undefined;
  private renderedAt = -Infinity;
  private readonly times = new TimeLabel();
  /** The item each rendered row shows. */
  private readonly rowItems = new WeakMap<Element, FeedItem<Note>>();

  constructor(private readonly options: ListOptions) {}

  /** Queues new items for the next update. */
  add(items: readonly FeedItem<Note>[]): void {
    if (items.length === 0) return;
    for (const item of items) this.pending.push(item);
    if (this.timer !== undefined) return;
    const wait = Math.max(0, this.renderedAt + RENDER_INTERVAL_MS - performance.now());
    this.timer = setTimeout(() => this.flush(), wait);
  }

  /** Empties the list now, queued items included (a replaced feed shows nothing of the old). */
  clear(): void {
    this.pending = [];
    clearTimeout(this.timer);
    this.timer = undefined;
    this.options.list.replaceChildren();
  }

  /** Re-marks every row after the read state changed. */
  restyle(): void {
    for (const li of this.options.list.querySelectorAll<HTMLLIElement>("li[data-testid=notification]")) {
      const item = this.rowItems.get(li);
      if (item) li.classList.toggle("unread", !this.options.isRead(item));
    }
  }

  /** Unread rows shown now: what the bell says. */
  unreadCount(): number {
    return this.options.list.querySelectorAll("li.unread").length;
  }

  /** The newest event row shown (not one still queued): what "mark all read" marks up to. */
  newest(): FeedItem<Note> | undefined {
    const rows = this.options.list.querySelectorAll("li[data-testid=notification]");
    const last = rows[rows.length - 1];
    return last ? this.rowItems.get(last) : undefined;
  }

  /** The item a row shows. */
  itemOf(row: Element): FeedItem<Note> | undefined {
    return this.rowItems.get(row);
  }

  private flush(): void {
    this.timer = undefined;
    this.renderedAt = performance.now();
    const { list } = this.options;
    const keep = this.options.keep();
    // Only the newest `keep` of the queued items can stay.
    const items = this.pending.length > keep ? this.pending.slice(this.pending.length - keep) : this.pending;
    this.pending = [];
    const fragment = document.createDocumentFragment();
    for (const item of items) {
      const li = renderItem(item, this.options.isRead, this.times);
      this.rowItems.set(li, item);
      fragment.append(li);
    }
    list.append(fragment);
    const extra = list.children.length - keep;
    if (extra > 0) {
      // The oldest rows, in one range removal rather than one by one.
      const range = document.createRange();
      range.setStartBefore(list.firstElementChild!);
      range.setEndAfter(list.children[extra - 1]!);
      range.deleteContents();
    }
    this.options.rendered?.();
  }
}
