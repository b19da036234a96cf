/**
 * The demo's notification sound: at most one beep per `minIntervalMs` however many events a
 * burst brings (the client calls `onEffect` once per event: a burst of 1,000 would start 1,000
 * oscillators), and the AudioContext suspended `suspendAfterMs` after the last beep, so an idle
 * tab holds no running audio thread. The element it is given shows the beeps played
 * (`data-beeps`) and the context's state (`data-audio`: `none` before the first beep).
 */

export interface ChimeOptions {
  /** Where `data-beeps` and `data-audio` are kept (a stable element of the page). */
  element: HTMLElement;
  /** Shortest time between two beeps, in ms. @default 1000 */
  minIntervalMs?: number;
  /** How long after a beep the AudioContext is suspended, in ms. @default 250 */
  suspendAfterMs?: number;
  /** Creates the AudioContext, on the first beep. @default () => new AudioContext() */
  createContext?: () => AudioContext;
  /** The clock, in ms. @default () => performance.now() */
  now?: () => number;
  /**
   * Whether the user has interacted with the page (the autoplay policy lets sound start only
   * then). @default navigator.userActivation.hasBeenActive (true where the browser lacks it)
   */
  activated?: () => boolean;
}

const DEFAULTS: Required<Omit<ChimeOptions, "element">> = {
  minIntervalMs: 1_000,
  suspendAfterMs: 250,
  createContext: () => new AudioContext(),
  now: () => performance.now(),
  activated: () => (typeof navigator === "undefined" || !("userActivation" in navigator) ? true : navigator.userActivation.hasBeenActive),
};

export class Chime {
  private readonly options: Required<ChimeOptions>;
  private audio: AudioContext | undefined;
  private lastAt = -Infinity;
  private beeps = 0;
  private idle: ReturnType<typeof setTimeout> | undefined;
  /** The context is suspended because we suspended it (not by the autoplay policy). */
  private suspendedByUs = false;
  private resuming = false;

  constructor(options: ChimeOptions) {
    this.options = { ...DEFAULTS, ...options };
    this.show();
  }

  /**
   * Plays the sound unless one played less than `minIntervalMs` ago. Never throws.
   *
   * The first beep makes the AudioContext, and `new AudioContext()` holds the main thread while
   * the audio stack starts (69–309 ms in headless Chromium without a sound device, more with a
   * real one): that made the first notification after a page load show late (1.2–1.4 s in the
   * report, docs/benchmarks/browser.md).
   * So no context is made before the user has interacted with the page (the autoplay policy
   * would keep it suspended: it could not sound), and the first one is made after the next
   * frame, the one that shows the notification's row (at once in a hidden tab: no frame).
   */
  beep(): void {
    const now = this.options.now();
    if (now - this.lastAt < this.options.minIntervalMs || this.resuming) return;
    if (!this.audio && !this.options.activated()) return;
    this.lastAt = now;
    // No audio (no device, or the browser refuses): the badge is enough.
    const play = () => void this.play().catch(() => undefined);
    if (this.audio) play();
    else if (typeof document !== "undefined" && document.visibilityState === "visible") requestAnimationFrame(() => setTimeout(play, 0));
    else setTimeout(play, 0);
  }

  private async play(): Promise<void> {
    const audio = (this.audio ??= this.createContext());
    if (audio.state === "suspended" && this.suspendedByUs) {
      // Resuming a context we suspended is allowed; one the autoplay policy holds (no user
      // gesture yet) stays silent, as before.
      this.resuming = true;
      try {
        await audio.resume();
      } finally {
        this.resuming = false;
      }
    }
    if (audio.state !== "running") return;
    this.suspendedByUs = false;
    const osc = audio.createOscillator();
    const gain = audio.createGain();
    gain.gain.value = 0.05;
    osc.connect(gain).connect(audio.destination);
    osc.frequency.value = 880;
    osc.start();
    osc.stop(audio.currentTime + 0.08);
    this.beeps++;
    this.show();
    clearTimeout(this.idle);
    this.idle = setTimeout(() => void this.suspend(audio), this.options.suspendAfterMs);
  }

  private createContext(): AudioContext {
    const audio = this.options.createContext();
    audio.addEventListener("statechange", () => this.show());
    return audio;
  }

  private async suspend(audio: AudioContext): Promise<void> {
    this.idle = undefined;
    if (audio.state !== "running") return;
    this.suspendedByUs = true;
    await audio.suspend().catch(() => undefined);
  }

  private show(): void {
    const { dataset } = this.options.element;
    dataset.beeps = String(this.beeps);
    dataset.audio = this.audio?.state ?? "none";
  }
}
