import type { PayloadOf } from "./payload";

type Todo = PayloadOf<"todos">["todos"][number];

const MARK: Record<Todo["status"], string> = { pending: "○", in_progress: "◐", completed: "●" };
const LABEL: Record<Todo["status"], string> = { pending: "to do", in_progress: "in progress", completed: "done" };

/** The todo list (the plan) after a TodoWrite. */
export function TodosView({ todos }: { todos: readonly Todo[] }) {
  if (todos.length === 0) return <p className="payload-note">The todo list is empty.</p>;
  return (
    <ol className="todos">
      {todos.map((todo, i) => (
        <li key={i} className={`todo todo-${todo.status}`} data-status={todo.status}>
          <span className="todo-mark" aria-label={LABEL[todo.status]}>
            {MARK[todo.status]}
          </span>
          <span className="todo-text">
            {todo.status === "in_progress" && todo.activeForm ? todo.activeForm : todo.content}
          </span>
        </li>
      ))}
    </ol>
  );
}
