// Sums a V8 heap snapshot by constructor (self size and count), largest first, to say where a
// bridge's memory per connection goes (issue 27). Divide by the connections held to get bytes
// per connection. BY=owner groups arrays, strings and plain objects by what holds them (the
// first retainer's constructor and the edge's name), which says whose they are.
//
//   node bench/heartbeat/heap-summary.mjs FILE.heapsnapshot [CONNECTIONS] [TOP]
import { readFileSync } from "node:fs";

const [file, connArg, topArg] = process.argv.slice(2);
if (!file) throw new Error("usage: heap-summary.mjs FILE.heapsnapshot [CONNECTIONS] [TOP]");
const connections = Number(connArg ?? 1);
const top = Number(topArg ?? 40);
const byOwner = process.env.BY === "owner";
const snap = JSON.parse(readFileSync(file, "utf8"));
const { node_fields: fields, node_types: types, edge_fields: edgeFields, edge_types: edgeTypes } = snap.snapshot.meta;
const width = fields.length;
const at = (name) => fields.indexOf(name);
const [TYPE, NAME, SIZE, EDGES] = [at("type"), at("name"), at("self_size"), at("edge_count")];
const typeNames = types[0];
const nodeCount = snap.nodes.length / width;
const typeOf = (n) => typeNames[snap.nodes[n * width + TYPE]];
const nameOf = (n) => snap.strings[snap.nodes[n * width + NAME]];

// The first retainer of each node, and the name of the edge it holds it by.
const owner = new Int32Array(nodeCount).fill(-1);
const ownerEdge = new Array(nodeCount);
if (byOwner) {
  const ew = edgeFields.length;
  const [ETYPE, ENAME, ETO] = [edgeFields.indexOf("type"), edgeFields.indexOf("name_or_index"), edgeFields.indexOf("to_node")];
  const edgeTypeNames = edgeTypes[0];
  let e = 0;
  for (let n = 0; n < nodeCount; n++) {
    const count = snap.nodes[n * width + EDGES];
    for (let k = 0; k < count; k++, e += ew) {
      const et = edgeTypeNames[snap.edges[e + ETYPE]];
      if (et === "weak" || et === "shortcut") continue;
      const to = snap.edges[e + ETO] / width;
      if (owner[to] !== -1) continue;
      owner[to] = n;
      const name = snap.edges[e + ENAME];
      ownerEdge[to] = et === "element" || et === "hidden" ? `[${et}]` : snap.strings[name];
    }
  }
}
const label = (n) => {
  const type = typeOf(n);
  if (type === "closure") return `closure ${nameOf(n)}`;
  if (type === "object" || type === "native") return nameOf(n);
  return `(${type})`;
};
const groups = new Map();
let total = 0;
for (let n = 0; n < nodeCount; n++) {
  const size = snap.nodes[n * width + SIZE];
  let name = label(n);
  const generic = name.startsWith("(") || name === "Object" || name === "Array" || name.startsWith("system /");
  if (byOwner && generic && owner[n] !== -1) {
    // Walk up through other generic holders (an Array's backing store, a Map's table) to a named one.
    let o = owner[n];
    let path = ownerEdge[n];
    for (let hops = 0; hops < 4 && o !== -1; hops++) {
      const l = label(o);
      if (!(l.startsWith("(") || l === "Object" || l === "Array" || l.startsWith("system /"))) break;
      path = `${ownerEdge[o]}.${path}`;
      o = owner[o];
    }
    name = `${name} <- ${o === -1 ? "?" : label(o)}.${path}`;
  }
  const g = groups.get(name) ?? { count: 0, size: 0 };
  g.count++;
  g.size += size;
  groups.set(name, g);
  total += size;
}
const rows = [...groups].sort((a, b) => b[1].size - a[1].size).slice(0, top);
console.log(`total ${(total / 1024 / 1024).toFixed(1)} MiB, ${(total / connections).toFixed(0)} B per connection over ${connections}`);
for (const [name, g] of rows) {
  console.log(`${String((g.size / connections).toFixed(1)).padStart(9)} B/conn ${String((g.count / connections).toFixed(2)).padStart(7)} /conn  ${name.slice(0, 110)}`);
}
