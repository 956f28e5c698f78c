// An editor built on @zed-industries/agent-client-protocol 0.4.5 (still inside editors):
// it starts `hermes acp`, sends one prompt, and prints as JSON the session updates its
// SDK accepted, the notifications it refused, and the prompt's stop reason. Each
// accepted update is also checked against the current SDK's schema (its zod file, by
// path: @agentclientprotocol/sdk does not export it).
import { spawn } from "node:child_process";
import { Readable, Writable } from "node:stream";
import { pathToFileURL } from "node:url";
import * as acp from "@zed-industries/agent-client-protocol";

const [python, cwd, currentSchema] = process.argv.slice(2);
const { zSessionNotification } = await import(pathToFileURL(currentSchema).href);
const agent = spawn(python, ["-m", "hermes", "acp"], { stdio: ["pipe", "pipe", "inherit"] });
const accepted = [];
const refused = [];
const quietError = console.error;
console.error = (...args) => {  // the SDK logs a notification its schema refused
  if (args[0] === "Error handling notification") refused.push(args[1]);
  else quietError(...args);
};
const stream = acp.ndJsonStream(Writable.toWeb(agent.stdin), Readable.toWeb(agent.stdout));
const connection = new acp.ClientSideConnection(() => ({
  async sessionUpdate(params) {
    const current = zSessionNotification.safeParse(params);
    accepted.push({ params, current: current.success ? "valid" : String(current.error) });
  },
  async requestPermission() {
    return { outcome: { outcome: "cancelled" } };
  },
}), stream);
await connection.initialize({ protocolVersion: acp.PROTOCOL_VERSION,
                              clientCapabilities: { fs: { readTextFile: false,
                                                          writeTextFile: false } } });
const session = await connection.newSession({ cwd, mcpServers: [] });
const answer = await connection.prompt({ sessionId: session.sessionId,
                                         prompt: [{ type: "text", text: "where am I?" }] });
agent.stdin.end();
process.stdout.write(JSON.stringify({ stopReason: answer.stopReason, accepted, refused }));
agent.kill();
process.exit(0);
