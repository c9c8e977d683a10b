// Chapter 1's panels (js_on_load): 'check' sends the player's answers as event data; 'next' opens the next level.
element.addEventListener("click", (event) => {
  const button = event.target.closest("button[data-act]");
  if (!button) return;
  if (button.dataset.act === "next") {
    trigger("next");
    return;
  }
  const answers = {};
  element.querySelectorAll("[data-answer]").forEach((el) => {
    answers[el.dataset.answer] = el.value;
  });
  trigger("check", answers);
});

watch("body", () => {
  const result = element.querySelector(".result");
  if (result && window.__dragon) window.__dragon.reveal(result);
});
