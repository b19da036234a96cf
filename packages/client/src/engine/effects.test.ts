import { describe, expect, it } from "vitest";
import { pickEffectTab } from "./effects.js";

const tab = (name: string, focused: boolean, focusedAt: number, order: number) => ({ name, focused, focusedAt, order });

describe("effects", () => {
  it("effects - the focused tab performs the effect", () => {
    const tabs = [tab("a", false, 5, 0), tab("b", true, 3, 1), tab("c", false, 9, 2)];
    expect(pickEffectTab(tabs)?.name).toBe("b");
  });

  it("effects - of several focused tabs, the most recently focused one", () => {
    const tabs = [tab("a", true, 5, 0), tab("b", true, 8, 1), tab("c", true, 2, 2)];
    expect(pickEffectTab(tabs)?.name).toBe("b");
    expect(pickEffectTab([...tabs].reverse())?.name).toBe("b");
  });

  it("effects - without focus, the longest-attached tab, whatever the order given", () => {
    const tabs = [tab("a", false, 9, 4), tab("b", false, 0, 1), tab("c", false, 3, 2)];
    expect(pickEffectTab(tabs)?.name).toBe("b");
    expect(pickEffectTab([...tabs].reverse())?.name).toBe("b");
  });

  it("effects - nobody, nobody performs it", () => {
    expect(pickEffectTab([])).toBeUndefined();
  });
});
