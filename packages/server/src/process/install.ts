/**
 * Wires workers into every Sync: `topic.process()` and `topic.deadLetters()` resolve to this
 * module. Imported for its effect by `./index.ts`.
 */
import { extendSync } from "../core/sync.js";
import { deadLettersFor } from "./dead-letters.js";
import { startWorker } from "./start.js";

extendSync({ process: startWorker, deadLetters: deadLettersFor });
