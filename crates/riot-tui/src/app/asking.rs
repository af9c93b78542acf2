//! What the app asks the person, and how they answer: permission
//! questions, AskUser questions, and the pickers built on them (`/rewind`,
//! `/model`), with their keys.

#[allow(clippy::wildcard_imports)] // one impl of App, split by job
use super::*;

impl App {
    /// A permission question from the gate; `key` identifies the answer.
    pub fn permission(
        &mut self,
        key: u64,
        request_id: RequestId,
        detail: Box<PermissionRequestDetail>,
    ) {
        let preview = Arc::new(preview::of(&detail, self.theme));
        self.asking.push_back(Asking::Permission {
            key,
            request_id,
            detail,
            selected: 0,
            preview,
            view: None,
        });
        self.asked();
    }

    /// A question arrived: the conversation takes the keys back to show
    /// it, its waiting time starts, and the bell rings.
    pub(super) fn asked(&mut self) {
        self.focus = None;
        self.tasks_open = None;
        self.track_wait();
        self.ring();
    }

    /// Questions from AskUser or a plan to approve; `key` identifies the
    /// answers. A plan (the request's context) goes into the scrollback.
    pub fn questions(&mut self, key: u64, request: QuestionRequest) {
        if let Some(context) = &request.context {
            self.markdown_block(context);
        }
        let checked = request.questions.first().map_or(0, |q| q.options.len());
        self.asking.push_back(Asking::Questions {
            key,
            answers: Vec::new(),
            index: 0,
            selected: 0,
            checked: vec![false; checked],
            text: String::new(),
            request,
        });
        self.asked();
    }

    /// `/rewind`'s picker over `points` (oldest first, as the kernel lists
    /// them): the newest message first, each with the files its turn
    /// changed. Choosing one sends `/rewind N`; Esc leaves everything as
    /// it is.
    pub fn rewind_points(&mut self, points: Vec<RewindChoice>) {
        if points.is_empty() {
            self.hint =
                Some("Nothing to rewind to yet: no message of yours in this session.".to_owned());
            return;
        }
        let options = points
            .iter()
            .rev()
            .map(|p| {
                let files = match p.files.as_slice() {
                    [] => "no file changed".to_owned(),
                    [one] => format!("changed {one}"),
                    [first, rest @ ..] => format!(
                        "changed {first} and {}",
                        crate::wrap::plural(rest.len() as u64, "other file", "other files")
                    ),
                };
                let history = if p.in_history {
                    ""
                } else {
                    "; before a compaction: files only"
                };
                QuestionOption {
                    label: format!("{} (message {})", short_title(&p.text), p.number),
                    description: Some(format!("{files}{history}")),
                }
            })
            .collect();
        self.questions(
            REWIND_KEY,
            QuestionRequest {
                tool_use_id: ToolUseId::new("rewind"),
                tool_name: "rewind".to_owned(),
                context: None,
                questions: vec![Question {
                    question: "Rewind files and conversation to just before which message?"
                        .to_owned(),
                    header: Some("rewind".to_owned()),
                    options,
                    multi_select: false,
                }],
            },
        );
    }

    /// `/model`'s picker: the current model, then `models` (id and a
    /// name for people) as the endpoint lists them. Choosing one sends
    /// `/model ID`. Without a list, `/model` goes to the kernel, which
    /// names the current model.
    pub fn model_choices(&mut self, models: Vec<(String, Option<String>)>) {
        let others: Vec<(String, Option<String>)> = models
            .into_iter()
            .filter(|(id, _)| *id != self.model)
            .collect();
        if others.is_empty() {
            self.submit_text("/model");
            return;
        }
        let label = |id: &str, name: Option<&str>| match name {
            Some(name) if name != id => format!("{name} [{id}]"),
            _ => format!("[{id}]"),
        };
        let mut options = vec![QuestionOption {
            label: label(&self.model, None),
            description: Some("the current model".to_owned()),
        }];
        options.extend(others.iter().map(|(id, name)| QuestionOption {
            label: label(id, name.as_deref()),
            description: None,
        }));
        self.questions(
            MODEL_KEY,
            QuestionRequest {
                tool_use_id: ToolUseId::new("model"),
                tool_name: "model".to_owned(),
                context: None,
                questions: vec![Question {
                    question: "Which model should the next requests go to?".to_owned(),
                    header: Some("model".to_owned()),
                    options,
                    multi_select: false,
                }],
            },
        );
    }

    /// The model picker's answer: `/model ID` for the chosen model.
    pub(super) fn model_chosen(&mut self, outcome: &QuestionOutcome) {
        let chosen = match outcome {
            QuestionOutcome::Answered(answers) => answers
                .first()
                .and_then(|a| a.first())
                .and_then(|label| label.rsplit_once('['))
                .map(|(_, id)| id.trim_end_matches(']').to_owned()),
            _ => None,
        };
        match chosen {
            Some(id) if id != self.model => self.submit_text(&format!("/model {id}")),
            _ => self.hint = Some(format!("Still {}.", self.model)),
        }
    }

    /// The picker's answer: `/rewind N` for the chosen message.
    pub(super) fn rewind_chosen(&mut self, outcome: &QuestionOutcome) {
        let chosen = match outcome {
            QuestionOutcome::Answered(answers) => answers
                .first()
                .and_then(|a| a.first())
                .and_then(|label| label.rsplit_once("(message "))
                .and_then(|(_, n)| n.trim_end_matches(')').parse::<u32>().ok()),
            _ => None,
        };
        match chosen {
            Some(n) => self.submit_text(&format!("/rewind {n}")),
            None => self.hint = Some("Nothing was rewound.".to_owned()),
        }
    }

    pub(super) fn reject(&mut self, asking: &Asking) {
        self.asking.pop_front();
        match asking {
            Asking::Permission { key, .. } => self.effects.push(Effect::Permission {
                key: *key,
                outcome: PermissionOutcome::RejectOnce { feedback: None },
            }),
            Asking::Questions { key, .. } if *key == REWIND_KEY => {
                self.rewind_chosen(&QuestionOutcome::Declined);
            }
            Asking::Questions { key, .. } if *key == MODEL_KEY => {
                self.model_chosen(&QuestionOutcome::Declined);
            }
            Asking::Questions { key, .. } => self.effects.push(Effect::Questions {
                key: *key,
                outcome: QuestionOutcome::Declined,
            }),
        }
    }

    pub(super) fn answer_key(&mut self, key: KeyEvent) {
        if self.view_key(key) {
            return;
        }
        let Some(first) = self.asking.front().cloned() else {
            return;
        };
        if key.code == KeyCode::Esc {
            self.reject(&first);
            return;
        }
        match first {
            Asking::Permission {
                key: id,
                detail,
                selected,
                ..
            } => {
                let options = choices(&detail);
                let pick = match key.code {
                    KeyCode::Char(preview::VIEW_KEY) => {
                        if let Some(Asking::Permission { view, preview, .. }) =
                            self.asking.front_mut()
                            && !preview.is_empty()
                        {
                            *view = Some(0);
                        }
                        None
                    }
                    KeyCode::Char(c) => options.iter().position(|o| o.key() == c).or_else(|| {
                        c.to_digit(10)
                            .and_then(|d| usize::try_from(d).ok())
                            .filter(|d| (1..=options.len()).contains(d))
                            .map(|d| d - 1)
                    }),
                    KeyCode::Enter => Some(selected),
                    KeyCode::Up | KeyCode::Down => {
                        let n = options.len();
                        let next = if key.code == KeyCode::Up {
                            (selected + n - 1) % n
                        } else {
                            (selected + 1) % n
                        };
                        if let Some(Asking::Permission { selected, .. }) = self.asking.front_mut() {
                            *selected = next;
                        }
                        None
                    }
                    _ => None,
                };
                if let Some(i) = pick {
                    let outcome = match &options[i] {
                        Choice::Once => PermissionOutcome::AllowOnce,
                        Choice::Always(rule) => {
                            PermissionOutcome::AllowAlways { rule: rule.clone() }
                        }
                        Choice::Reject => PermissionOutcome::RejectOnce { feedback: None },
                    };
                    self.asking.pop_front();
                    self.effects.push(Effect::Permission { key: id, outcome });
                }
            }
            Asking::Questions { .. } => self.question_key(key),
        }
    }

    /// A key while the whole preview is shown: it scrolls, and Esc, `q`
    /// or `v` go back to the question; the answer keys wait for it. False
    /// when no preview is shown whole.
    pub(super) fn view_key(&mut self, key: KeyEvent) -> bool {
        let rows = match self.asking.front() {
            Some(Asking::Permission {
                preview,
                view: Some(_),
                ..
            }) => preview::view_rows(preview, usize::from(self.width), &[Span::raw("│ ")]).len(),
            _ => return false,
        };
        let page = self.page();
        let last = rows.saturating_sub(page);
        let Some(Asking::Permission {
            view: Some(top), ..
        }) = self.asking.front_mut()
        else {
            return false;
        };
        let at = (*top).min(last);
        let to = match key.code {
            KeyCode::Up | KeyCode::Char('k') => at.saturating_sub(1),
            KeyCode::Down | KeyCode::Char('j') | KeyCode::Enter => at + 1,
            KeyCode::PageUp | KeyCode::Char('b') => at.saturating_sub(page),
            KeyCode::PageDown | KeyCode::Char(' ' | 'f') => at + page,
            KeyCode::Home | KeyCode::Char('g') => 0,
            KeyCode::End | KeyCode::Char('G') => last,
            KeyCode::Esc | KeyCode::Char('q' | preview::VIEW_KEY) => {
                if let Some(Asking::Permission { view, .. }) = self.asking.front_mut() {
                    *view = None;
                }
                return true;
            }
            _ => at,
        };
        *top = to.min(last);
        true
    }

    pub(super) fn question_key(&mut self, key: KeyEvent) {
        let Some(Asking::Questions {
            key: id,
            request,
            index,
            answers,
            selected,
            checked,
            text,
        }) = self.asking.front_mut()
        else {
            return;
        };
        let Some(question) = request.questions.get(*index) else {
            return;
        };
        let n = question.options.len();
        let mut answer: Option<Vec<String>> = None;
        if n == 0 {
            match key.code {
                KeyCode::Enter => answer = Some(vec![std::mem::take(text)]),
                KeyCode::Backspace => {
                    text.pop();
                }
                KeyCode::Char(c) => text.push(c),
                _ => {}
            }
        } else {
            match key.code {
                KeyCode::Up => *selected = (*selected + n - 1) % n,
                KeyCode::Down => *selected = (*selected + 1) % n,
                KeyCode::Char(' ') if question.multi_select => {
                    if let Some(c) = checked.get_mut(*selected) {
                        *c = !*c;
                    }
                }
                KeyCode::Char(c) if c.is_ascii_digit() => {
                    let d = c
                        .to_digit(10)
                        .and_then(|d| usize::try_from(d).ok())
                        .unwrap_or(0);
                    if (1..=n).contains(&d) {
                        if question.multi_select {
                            if let Some(c) = checked.get_mut(d - 1) {
                                *c = !*c;
                            }
                        } else {
                            answer = Some(vec![question.options[d - 1].label.clone()]);
                        }
                    }
                }
                KeyCode::Enter => {
                    let chosen: Vec<String> = if question.multi_select && checked.iter().any(|c| *c)
                    {
                        question
                            .options
                            .iter()
                            .zip(checked.iter())
                            .filter(|(_, c)| **c)
                            .map(|(o, _)| o.label.clone())
                            .collect()
                    } else {
                        vec![question.options[*selected].label.clone()]
                    };
                    answer = Some(chosen);
                }
                _ => {}
            }
        }
        let Some(answer) = answer else { return };
        let asked = question.question.clone();
        answers.push(answer.clone());
        *index += 1;
        *selected = 0;
        text.clear();
        let next_options = request.questions.get(*index).map(|q| q.options.len());
        let id = *id;
        let done = next_options.is_none();
        if let Some(n) = next_options {
            *checked = vec![false; n];
        }
        let all = if done {
            Some(std::mem::take(answers))
        } else {
            None
        };
        let dim = self.theme.dim();
        let shown = if answer.iter().all(String::is_empty) {
            "(no answer)".to_owned()
        } else {
            answer.join(", ")
        };
        let rows = wrap(
            &Line::from(vec![
                Span::styled(format!("{asked} "), dim),
                Span::styled(shown, self.theme.user()),
            ]),
            usize::from(self.width),
            &[Span::styled("? ", self.theme.question())],
            &[Span::raw("  ")],
        );
        self.push_block(rows);
        if let Some(all) = all {
            self.asking.pop_front();
            let outcome = QuestionOutcome::Answered(all);
            if id == REWIND_KEY {
                self.rewind_chosen(&outcome);
            } else if id == MODEL_KEY {
                self.model_chosen(&outcome);
            } else {
                self.effects.push(Effect::Questions { key: id, outcome });
            }
        }
    }
}
