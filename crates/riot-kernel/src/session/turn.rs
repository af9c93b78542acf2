//! Running a turn: a prompt (or a slash command) or Riot's queued
//! messages through the loop, what every turn does at its end, and a
//! panic inside the loop turned into the turn's `Done { Error }`.

use std::panic::AssertUnwindSafe;

use futures::{Stream, StreamExt};
use riot_protocol::{
    AgentError, AgentEvent, CancelScope, ErrorKind, Message, MessageId, TerminalReason,
};

use super::{Session, failed};

impl Session {
    /// Runs one turn for `prompt`. Exactly one `Done`, always last — also
    /// when the loop panics: the panic becomes this session's
    /// `Done { Error }` instead of taking the process down (docs/design.md §2).
    /// The next turn answers any tool use the panic left unanswered.
    ///
    /// A prompt naming a slash command runs it: a built-in acts on the
    /// session (its output is an `Info` system message), a command file
    /// becomes the prompt. `@path` mentions attach the files' text.
    ///
    /// UserPromptSubmit hooks run first: a block ends the turn with the
    /// reason shown to the person (the prompt is not sent); their context,
    /// and that of SessionStart hooks, follows the prompt.
    pub fn turn<'a>(
        &'a mut self,
        prompt: &str,
        cancel: CancelScope,
    ) -> impl Stream<Item = AgentEvent> + Send + 'a {
        let prompt = prompt.to_owned();
        let inner = async_stream::stream! {
            if let Some(previous) = self.restore_model.take() {
                self.set_model(&previous);
            }
            let mut text = prompt.clone();
            let mut model_for_turn = None;
            if let Some(invocation) = riot_extensions::commands::parse_invocation(&prompt) {
                let command = self.commands.get(invocation.name).cloned();
                let args = invocation.args.to_owned();
                match command {
                    None => {
                        let name = invocation.name.to_owned();
                        for event in failed(
                            self.deps.ids.as_ref(),
                            ErrorKind::Usage,
                            format!("Unknown command /{name}. Type /help to list the commands; to send text that starts with a slash, begin it with a word."),
                        ) {
                            yield event;
                        }
                        return;
                    }
                    Some(command) if command.origin == riot_extensions::extension_files::Origin::Builtin => {
                        for event in self.builtin(&command.name, &args).await {
                            yield event;
                        }
                        return;
                    }
                    Some(command) => match self.command_prompt(&command, &args).await {
                        Ok(expanded) => {
                            text = expanded;
                            model_for_turn = command.model.clone();
                        }
                        Err(problem) => {
                            let message = problem.to_string();
                            for event in failed(self.deps.ids.as_ref(), ErrorKind::Usage, message) {
                                yield event;
                            }
                            return;
                        }
                    },
                }
            }
            let mut extra = std::mem::take(&mut self.start_context);
            match self.hooks.user_prompt_submit(&text).await {
                riot_extensions::hooks::PromptVerdict::Block { reason } => {
                    self.start_context = extra;
                    yield AgentEvent::Message {
                        message: self.system_message(
                            riot_protocol::SystemLevel::Warning,
                            format!("A UserPromptSubmit hook blocked this prompt: {reason}"),
                        ),
                    };
                    yield AgentEvent::Done { reason: TerminalReason::StopHookPrevented };
                    return;
                }
                riot_extensions::hooks::PromptVerdict::Context(context) => {
                    self.recent_requests.push(&text);
                    extra.extend(context);
                }
            }
            // Typing of the person's into a terminal the model has not
            // read since: said now, or the model may never learn of it.
            for (name, typed) in self.terminals().take_person_typed() {
                extra.push(format!(
                    "The person typed into terminal `{name}` since you last read it: {typed}. Read it with the Terminal tool to see what it shows now."
                ));
            }
            let mut attachments =
                riot_extensions::commands::attach_mentions(self.fs.as_ref(), &self.cwd, &text).await;
            for (n, image) in std::mem::take(&mut self.next_images).into_iter().enumerate() {
                let name = format!("image {}", n + 1);
                attachments.extend(riot_extensions::commands::attach_image_data(&name, image).await);
            }
            let mut message =
                Message::user_text(MessageId::generate(self.deps.ids.as_ref()), text);
            if let Message::User(user) = &mut message {
                user.content.extend(attachments);
                user.content
                    .extend(extra.into_iter().map(|text| riot_protocol::UserBlock::Text { text }));
            }
            // What Riot queued while no turn ran (a background task's
            // result) goes with this prompt, after the person's words.
            let riots = self.pending.deliver_riots();
            if let Message::User(user) = &mut message {
                for queued in &riots {
                    if let Message::User(queued) = queued {
                        user.content.extend(queued.content.iter().cloned());
                    }
                }
            }
            if let Some(model) = &model_for_turn {
                // Restored after the turn, or — if the turn panicked — at
                // the start of the next one.
                self.restore_model = Some(self.state.model.clone());
                self.set_model(model);
            }
            let run = self.run_message(message, riots, cancel);
            let mut run = std::pin::pin!(run);
            while let Some(event) = run.next().await {
                yield event;
            }
        };
        panic_to_done(inner)
    }

    /// A turn that gives the model what Riot queued while no turn ran (a
    /// background task's result), when no prompt of the person's would
    /// carry it: one message of Riot's with each waiting message's text,
    /// in order. No UserPromptSubmit hook runs (the person wrote nothing).
    /// With nothing waiting it ends at once, `Completed`, without a
    /// request.
    pub fn deliver_turn<'a>(
        &'a mut self,
        cancel: CancelScope,
    ) -> impl Stream<Item = AgentEvent> + Send + 'a {
        let inner = async_stream::stream! {
            if let Some(previous) = self.restore_model.take() {
                self.set_model(&previous);
            }
            let riots = self.pending.deliver_riots();
            if riots.is_empty() {
                yield AgentEvent::Done { reason: TerminalReason::Completed };
                return;
            }
            let content = riots
                .iter()
                .filter_map(|m| match m {
                    Message::User(u) => Some(u.content.iter().cloned()),
                    _ => None,
                })
                .flatten()
                .collect();
            let message = Message::User(riot_protocol::UserMessage {
                id: MessageId::generate(self.deps.ids.as_ref()),
                content,
                origin: riot_protocol::MessageOrigin::Context,
            });
            let run = self.run_message(message, riots, cancel);
            let mut run = std::pin::pin!(run);
            while let Some(event) = run.next().await {
                yield event;
            }
        };
        panic_to_done(inner)
    }

    /// The loop on `message` (with Riot's queued `riots` in it), its cost
    /// metered; then what every turn does at its end.
    fn run_message<'a>(
        &'a mut self,
        message: Message,
        riots: Vec<Message>,
        cancel: CancelScope,
    ) -> impl Stream<Item = AgentEvent> + Send + 'a {
        async_stream::stream! {
            let prompt_id = message.id().clone();
            {
                let run = riot_core::run_agent(&mut self.state, Some(message), &self.deps, cancel);
                let mut run = std::pin::pin!(run);
                while let Some(event) = run.next().await {
                    self.cost.observe(&event);
                    yield event;
                }
            }
            self.requeue_if_withdrawn(&prompt_id, riots);
            self.after_turn();
        }
    }

    /// A turn stopped before anything came back withdraws its prompt;
    /// Riot's messages that went with it wait again, held: the person
    /// stopped that turn, so they go with the next prompt (or a face's
    /// explicit delivery) rather than waking the session at once.
    fn requeue_if_withdrawn(&self, prompt_id: &MessageId, riots: Vec<Message>) {
        if riots.is_empty() || self.state.messages.iter().any(|m| m.id() == prompt_id) {
            return;
        }
        for queued in riots {
            if let Message::User(queued) = queued {
                for block in queued.content {
                    if let riot_protocol::UserBlock::Text { text } = block {
                        self.pending.push_held(&text, queued.origin);
                    }
                }
            }
        }
    }

    /// What every turn does at its end: a command's model gives way to the
    /// session's, and a plan approved during the turn sets the mode from
    /// now on.
    fn after_turn(&mut self) {
        if let Some(previous) = self.restore_model.take() {
            self.set_model(&previous);
        }
        let mode = self.mode_cell.get();
        if mode != self.state.mode {
            self.set_mode(mode);
        }
    }
}

/// Turns a panic inside a turn's stream into that turn's final
/// `Done { Error }`.
pub fn panic_to_done<'a>(
    inner: impl Stream<Item = AgentEvent> + Send + 'a,
) -> impl Stream<Item = AgentEvent> + Send + 'a {
    async_stream::stream! {
        let mut guarded = std::pin::pin!(AssertUnwindSafe(inner).catch_unwind());
        while let Some(item) = guarded.next().await {
            match item {
                Ok(event) => yield event,
                Err(panic) => {
                    let what = panic
                        .downcast_ref::<String>()
                        .map(String::as_str)
                        .or_else(|| panic.downcast_ref::<&str>().copied())
                        .unwrap_or("unknown panic");
                    tracing::error!(panic = what, "the agent loop panicked");
                    yield AgentEvent::Done {
                        reason: TerminalReason::Error {
                            error: AgentError {
                                kind: ErrorKind::Internal,
                                message: format!("Riot hit an internal error and stopped this turn: {what}. The session is saved; you can resume it."),
                            },
                        },
                    };
                    return;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use futures::StreamExt;
    use riot_protocol::{AgentEvent, CompactionStrategy, ErrorKind, TerminalReason};

    use super::panic_to_done;

    #[tokio::test]
    async fn a_panic_in_the_loop_becomes_the_turns_done_error() {
        let inner = futures::stream::iter(0..3).map(|i| {
            if i == 2 {
                panic!("broken invariant");
            }
            AgentEvent::Compacting {
                strategy: CompactionStrategy::Summary,
            }
        });
        let events: Vec<AgentEvent> = panic_to_done(inner).collect().await;
        assert_eq!(events.len(), 3);
        let AgentEvent::Done {
            reason: TerminalReason::Error { error },
        } = &events[2]
        else {
            panic!("expected Done(Error), got {:?}", events[2]);
        };
        assert_eq!(error.kind, ErrorKind::Internal);
        assert!(
            error.message.contains("broken invariant"),
            "{}",
            error.message
        );
    }
}
