#!/usr/bin/env bash
# Regenerate the pictures of docs/gallery.md (about 1 h on 2 busy CPU cores; much less on one free machine).
# Run from the repository root. Short runs keep it cheap; the report's own runs are longer.
set -euo pipefail
R=${R:-/tmp/gallery-results}
G=docs/gallery
# The analytic contact shape, as the pictures were drawn (the folders alone run the MEDUSA
# law's default shape, medusa_search, whose collisions differ: docs/report-examples.md).
S="--contact-geometry superellipsoid"
jaxmedusa run studies/medusa/offset -t 2.5 -o "$R" $S
jaxmedusa run studies/medusa/wave -t 2.5 -o "$R" $S
jaxmedusa run studies/medusa/merge -t 1.5 -o "$R" $S
jaxmedusa run studies/medusa/evade -t 3 -o "$R"
jaxmedusa run studies/medusa/banked -t 3 -o "$R"
jaxmedusa sweep docs/gallery/offset_grid.toml --out "$R/offset-grid"
for name in offset wave merge evade banked offset-grid; do
  jaxmedusa plot "$R/$name" --out "$R/plots/$name"
done
cp "$R/plots/offset/plan_view_moving.png" $G/offset_plan_moving.png
cp "$R/plots/offset/histories.png" $G/offset_histories.png
cp "$R/plots/wave/plan_view_moving.png" $G/wave_plan_moving.png
cp "$R/plots/wave/histories.png" $G/wave_histories.png
cp "$R/plots/merge/plan_view.png" $G/merge_plan.png
cp "$R/plots/merge/histories.png" $G/merge_histories.png
cp "$R/plots/evade/plan_view.png" $G/evade_plan.png
cp "$R/plots/evade/histories.png" $G/evade_histories.png
cp "$R/plots/banked/plan_view.png" $G/banked_plan.png
cp "$R/plots/banked/histories.png" $G/banked_histories.png
cp "$R/plots/offset-grid/sweep_delta_v.png" $G/offset_grid_delta_v.png
jaxmedusa animate "$R/offset" --moving --speed 0.5 --fps 10 --out $G/offset_moving.gif
