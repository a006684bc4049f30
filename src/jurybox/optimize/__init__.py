"""``jurybox optimize``: search a judge's prompt on train and dev, measure the winner once on test.

``config`` (the optimize YAML), ``split`` (a labelled split of any mode, with its ledger of test
passes), ``candidates`` (instruction variants, few-shot sets from train, rubric variants, leak
checks), ``proposer`` (rewrites from a judge shown train items only), ``search`` (successive
halving within a budget, the final choice; pure), ``scoring`` (per-item scores from records),
``prepare`` (the split in use, candidates as run configs, the plan), ``state`` (the optimize's
folder), ``report`` (Markdown and the winning config). The use case is ``app.optimize``.
"""
