// A stand-in for the Anthropic Messages API on 127.0.0.1, for running the real
// Claude Code CLI without a network: the first turn of a conversation answers
// with the tool call it is given, a turn that carries a tool result answers
// "Done.", and any other request (Claude Code's own small side requests) a
// short text. Streams the Messages API's server-sent events when asked to.
import { createServer } from "node:http";

/** The events of one assistant message whose content is `block`. */
function events(block, stopReason) {
  const start = block.type === "tool_use" ? { ...block, input: {} } : { type: "text", text: "" };
  const delta =
    block.type === "tool_use"
      ? { type: "input_json_delta", partial_json: JSON.stringify(block.input) }
      : { type: "text_delta", text: block.text };
  const message = {
    id: `msg_${Math.random().toString(16).slice(2)}`, type: "message", role: "assistant", model: "claude-stand-in",
    content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: 10, output_tokens: 1 },
  };
  return [
    ["message_start", { type: "message_start", message }],
    ["content_block_start", { type: "content_block_start", index: 0, content_block: start }],
    ["content_block_delta", { type: "content_block_delta", index: 0, delta }],
    ["content_block_stop", { type: "content_block_stop", index: 0 }],
    ["message_delta", { type: "message_delta", delta: { stop_reason: stopReason, stop_sequence: null }, usage: { output_tokens: 12 } }],
    ["message_stop", { type: "message_stop" }],
  ];
}

/** Whether a request carries the result of a tool call. */
const hasToolResult = (body) =>
  (body.messages ?? []).some((m) => Array.isArray(m.content) && m.content.some((c) => c.type === "tool_result"));

/**
 * Starts the stand-in. `next(call)` sets the tool call the next conversation
 * asks for: `{name, input}`. `requests` holds every request body received.
 */
export async function startModel() {
  const model = { requests: [], call: null };
  const server = createServer((req, res) => {
    let text = "";
    req.on("data", (chunk) => (text += chunk));
    req.on("end", () => {
      if (req.method !== "POST" || !req.url.startsWith("/v1/messages")) {
        res.writeHead(404, { "content-type": "application/json" }).end(JSON.stringify({ type: "error", error: { type: "not_found_error", message: req.url } }));
        return;
      }
      const body = JSON.parse(text || "{}");
      model.requests.push(body);
      if (req.url.startsWith("/v1/messages/count_tokens")) {
        res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ input_tokens: 10 }));
        return;
      }
      const asksTool = model.call && (body.tools ?? []).some((t) => t.name === model.call.name) && !hasToolResult(body);
      const block = asksTool
        ? { type: "tool_use", id: `toolu_${model.requests.length}`, name: model.call.name, input: model.call.input }
        : { type: "text", text: hasToolResult(body) ? "Done." : "OK" };
      const stop = asksTool ? "tool_use" : "end_turn";
      if (!body.stream) {
        res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({
          id: "msg_plain", type: "message", role: "assistant", model: "claude-stand-in", content: [block],
          stop_reason: stop, stop_sequence: null, usage: { input_tokens: 10, output_tokens: 12 },
        }));
        return;
      }
      res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
      for (const [name, data] of events(block, stop)) res.write(`event: ${name}\ndata: ${JSON.stringify(data)}\n\n`);
      res.end();
    });
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  model.url = `http://127.0.0.1:${server.address().port}`;
  model.next = (call) => {
    model.call = call;
  };
  model.stop = () => new Promise((resolve) => server.close(resolve));
  return model;
}
