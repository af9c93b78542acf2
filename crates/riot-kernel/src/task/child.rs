//! Running a subagent: its tools, policy, system prompt and transcript,
//! its loop followed to the end, and the Task call's result.

use std::sync::Arc;

use async_trait::async_trait;
use futures::StreamExt;
use riot_core::{AgentDeps, AgentState, ContextManager, NoQueue, NoStopHooks, NoWorkingSet};
use riot_protocol::{
    AgentEvent, CancelReason, CancelScope, DecisionReason, DynTool, Message, MessageId,
    PermissionMode, PermissionPolicy, PermissionQuery, PermissionResult, PermissionRule,
    ProgressPayload, Provider, SessionId, SystemPrompt, TerminalReason, ToolContext, ToolOutcome,
    ToolRunner,
};
use riot_store::{SessionMeta, SessionStore};

use super::{AgentDefinition, MAX_ANSWER_CHARS, SUBAGENT_MAX_TURNS, Subagents};
use crate::plan::ModeCell;
use crate::runner::{McpSelection, StackBase};

/// Refuses every call that is not read-only, for read-only agents; the
/// rest goes to the session's chain.
#[derive(Debug)]
struct ReadOnlyPolicy {
    inner: Arc<dyn PermissionPolicy>,
    agent: String,
}

#[async_trait]
impl PermissionPolicy for ReadOnlyPolicy {
    async fn decide(&self, query: &PermissionQuery) -> PermissionResult {
        if !query.is_read_only {
            let detail = format!("the `{}` agent only reads", self.agent);
            return PermissionResult::Deny {
                message: format!(
                    "The `{}` agent is read-only: it cannot run {} with this input. Report what should change instead of changing it.",
                    self.agent, query.tool_name
                ),
                reason: DecisionReason::Mode {
                    detail,
                    mode: query.mode,
                },
            };
        }
        self.inner.decide(query).await
    }

    fn remember(&self, rule: PermissionRule) {
        self.inner.remember(rule);
    }

    fn answered_by_person(&self) {
        self.inner.answered_by_person();
    }
}

impl Subagents {
    /// The tools of an agent: its list, from what a subagent may have
    /// (the built-ins, Skill, AskUser and the web tools, then MCP tools —
    /// all of them, or those the list names).
    fn tools_for(
        &self,
        agent: &AgentDefinition,
        stack: &StackBase,
    ) -> (Vec<Arc<dyn DynTool>>, McpSelection) {
        let mut all: Vec<Arc<dyn DynTool>> = riot_tools::builtin()
            .into_iter()
            .filter(|t| t.name() != "Terminal" || self.stack.terminals.available())
            .filter(|t| t.name() != "Browser" || self.stack.browser.available())
            .collect();
        all.push(Arc::new(riot_extensions::skills::SkillTool {
            catalog: self.skills.clone(),
        }));
        all.push(Arc::new(crate::ask::AskUser {
            gate: Arc::clone(&stack.gate),
        }));
        all.extend(self.web_tools.iter().cloned());
        match &agent.tools {
            None => (all, McpSelection::All),
            Some(names) => (
                all.into_iter()
                    .filter(|t| names.iter().any(|n| n == t.name()))
                    .collect(),
                McpSelection::Named(names.clone()),
            ),
        }
    }

    fn system_prompt(&self, agent: &AgentDefinition) -> SystemPrompt {
        SystemPrompt {
            stable: format!(
                "You are a subagent of Riot, a coding agent: another agent gave you the task in the first message, and your final message is all it will see of your work.\n\n\
{}\n\n\
# How to finish\n\n\
- Do the whole task, then answer with what you found or did: exact file paths, line numbers and names, and what is still uncertain. Be complete but concise; do not repeat the task.\n\
- You cannot ask the other agent anything; make reasonable assumptions and state them.\n\
- Never claim to have done what you did not do.",
                agent.instructions
            ),
            session: self.session_section.get().cloned().unwrap_or_default(),
        }
    }

    /// Runs one subagent to its end, its tools on `stack` (the session's,
    /// or for a background agent the same with nobody to ask).
    pub(super) async fn run(
        &self,
        agent: &AgentDefinition,
        prompt: String,
        ctx: &ToolContext,
        stack: &StackBase,
    ) -> ToolOutcome {
        let subagent_model = match &self.model {
            Ok(m) => m,
            Err(why) => {
                return ToolOutcome::failed(format!(
                    "The subagent could not start: there is no model to run it ({why})"
                ));
            }
        };
        let ids = Arc::clone(&self.stack.caps.ids);
        let child = SessionId::generate(ids.as_ref());
        let model = agent
            .model
            .clone()
            .unwrap_or_else(|| subagent_model.model.get());
        // An agent's own mode applies only where the session lets the
        // model act: it never moves a plan or dont-ask session.
        let mode = match (ctx.mode, agent.mode) {
            (PermissionMode::Plan | PermissionMode::DontAsk, _) | (_, None) => ctx.mode,
            (_, Some(mode)) => mode,
        };
        let child_loop = ChildLoop {
            agent,
            child: &child,
            model,
            mode,
            provider: &subagent_model.provider,
            stack,
        };
        let (mut state, deps) = match self.child_loop(child_loop) {
            Ok(parts) => parts,
            Err(e) => {
                return ToolOutcome::failed(format!(
                    "The subagent could not start: its transcript could not be created ({e})."
                ));
            }
        };
        let message = Message::user_text(MessageId::generate(ids.as_ref()), prompt);
        let ended = follow_child(agent, &mut state, message, &deps, ctx).await;
        ended.outcome(agent, &child)
    }

    /// The child's loop state and dependencies: its tools on a runner
    /// made from `stack` under the agent's policy and mode, and its
    /// transcript, created now; `Err` when it could not be.
    fn child_loop(
        &self,
        parts: ChildLoop<'_>,
    ) -> Result<(AgentState, AgentDeps), riot_store::StoreError> {
        let ChildLoop {
            agent,
            child,
            model,
            mode,
            provider,
            stack,
        } = parts;
        let ids = Arc::clone(&self.stack.caps.ids);
        let clock = Arc::clone(&self.stack.caps.clock);
        let policy: Arc<dyn PermissionPolicy> = if agent.is_read_only() {
            Arc::new(ReadOnlyPolicy {
                inner: Arc::clone(&self.stack.policy),
                agent: agent.name.clone(),
            })
        } else {
            Arc::clone(&self.stack.policy)
        };
        let (tools, mcp) = self.tools_for(agent, stack);
        let runner: Arc<dyn ToolRunner> = Arc::new(stack.runner(
            tools,
            Arc::new(self.stack.tool_env(child)),
            policy,
            ModeCell::new(mode),
            None,
            mcp,
        ));
        let system = self.system_prompt(agent);
        let mut meta = SessionMeta::new(
            child.clone(),
            self.stack.cwd.clone(),
            model.clone(),
            clock.now_ms(),
        );
        meta.parent = Some(self.parent.clone());
        meta.system = Some(system.clone());
        let writer = SessionStore::new(self.home.join("sessions")).create(&meta)?;
        let deps = AgentDeps {
            provider: Arc::clone(provider),
            tools: Arc::clone(&runner),
            compactor: Arc::new(ContextManager::new(
                Arc::clone(provider),
                Arc::new(NoWorkingSet),
            )),
            transcript: Arc::new(crate::transcript::StoreSink::open(
                writer,
                Arc::clone(&clock),
            )),
            hooks: Arc::new(NoStopHooks),
            queue: Arc::new(NoQueue),
            clock: Arc::clone(&clock),
            ids: Arc::clone(&ids),
        };
        let capabilities = provider.capabilities(&model);
        let mut state = AgentState::new(child.clone(), model, system);
        state.tools = runner.specs();
        state.mode = mode;
        state.max_turns = SUBAGENT_MAX_TURNS;
        state.cache_key = Some(child.to_string());
        state.max_tokens = riot_core::context::request_max_tokens(&capabilities);
        Ok((state, deps))
    }
}

/// What a subagent's loop is made of, besides the session's [`Subagents`].
struct ChildLoop<'a> {
    agent: &'a AgentDefinition,
    /// The child session's id.
    child: &'a SessionId,
    model: String,
    mode: PermissionMode,
    provider: &'a Arc<dyn Provider>,
    /// Where its tools run.
    stack: &'a StackBase,
}

/// How a subagent's loop went: its last answer, its tool calls, its end.
struct ChildEnd {
    answer: String,
    calls: usize,
    end: Option<TerminalReason>,
}

/// Runs the child's loop on `message` to its end, reporting its tool
/// calls as the parent call's progress and stopping it when the parent
/// call is cancelled.
async fn follow_child(
    agent: &AgentDefinition,
    state: &mut AgentState,
    message: Message,
    deps: &AgentDeps,
    ctx: &ToolContext,
) -> ChildEnd {
    let scope = CancelScope::new();
    let mut answer = String::new();
    let mut calls = 0usize;
    let mut end = None;
    {
        let run = riot_core::run_agent(state, Some(message), deps, scope.clone());
        let mut run = std::pin::pin!(run);
        let mut stop_sent = false;
        loop {
            let event = if stop_sent {
                run.next().await
            } else {
                let next = run.next();
                let cancelled = std::pin::pin!(ctx.cancel.cancelled());
                match futures::future::select(next, cancelled).await {
                    futures::future::Either::Left((event, _)) => event,
                    futures::future::Either::Right(((), _)) => {
                        // Stopped: the child winds down, its calls paired.
                        scope.cancel(CancelReason::User);
                        stop_sent = true;
                        continue;
                    }
                }
            };
            let Some(event) = event else { break };
            match event {
                AgentEvent::ToolStarted { describe, .. } => {
                    calls += 1;
                    ctx.report(ProgressPayload::Status {
                        text: format!("{}: {describe}", agent.name),
                    });
                }
                AgentEvent::Message {
                    message: Message::Assistant(a),
                } => {
                    let text = a.text();
                    if !text.trim().is_empty() {
                        answer = text;
                    }
                }
                AgentEvent::Done { reason } => end = Some(reason),
                _ => {}
            }
        }
    }
    ChildEnd { answer, calls, end }
}

impl ChildEnd {
    /// The Task call's result: the answer (capped) with a footer naming
    /// the child session, or why there is none.
    fn outcome(self, agent: &AgentDefinition, child: &SessionId) -> ToolOutcome {
        let Self { answer, calls, end } = self;
        let footer = format!(
            "\n\n(subagent `{}`, session {child}, {calls} tool call{})",
            agent.name,
            if calls == 1 { "" } else { "s" }
        );
        let answer = cap(answer.trim());
        match end {
            Some(TerminalReason::Completed | TerminalReason::StopHookPrevented) => {
                let answer = if answer.is_empty() {
                    "(the subagent finished without an answer)".to_owned()
                } else {
                    answer
                };
                ToolOutcome::text(format!("{answer}{footer}"), None)
            }
            Some(TerminalReason::MaxTurns) => ToolOutcome::text(
                format!(
                    "{answer}\n\n[The subagent was stopped after {SUBAGENT_MAX_TURNS} model requests; its work may be incomplete.]{footer}"
                ),
                None,
            ),
            Some(TerminalReason::Aborted { .. }) => ToolOutcome::Cancelled,
            Some(TerminalReason::Refusal) => {
                ToolOutcome::failed(format!("The subagent's model refused the task.{footer}"))
            }
            Some(TerminalReason::Error { error }) => {
                ToolOutcome::failed(format!("The subagent failed: {}{footer}", error.message))
            }
            None => ToolOutcome::failed(format!("The subagent ended without an answer.{footer}")),
        }
    }
}

fn cap(text: &str) -> String {
    let total = text.chars().count();
    if total <= MAX_ANSWER_CHARS {
        return text.to_owned();
    }
    let cut: String = text.chars().take(MAX_ANSWER_CHARS).collect();
    format!("{cut}\n[cut: the first {MAX_ANSWER_CHARS} of {total} characters]")
}
