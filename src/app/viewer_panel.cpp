// The viewer's ImGui panel (timing, simulation, the parameter table's rows, view) and the HUD.
#include <glad/gl.h>
// glad first: GLFW must not pull in the system GL header.
#include <GLFW/glfw3.h>
#include <imgui.h>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <stdexcept>

#include "app/params_json.h"
#include "app/parse.h"
#include "app/summary.h"
#include "app/viewer.h"
#include "app/viewer_state.h"
#include "core/param_table.h"
#include "core/pipeline_table.h"
#include "core/rule_table.h"
#include "core/stages.h"

namespace murmur::app::viewer {

namespace {

// The stage times of the step the panel shows, three to a line: "label 0.012 sort 0.034 bounds
// 0.005"; they add up to the step's time (stageItems).
void stageLines(const TimedStep& step) {
  std::string line;
  int onLine = 0;
  for (const auto& [name, ms] : stageItems(step)) {
    char item[64];
    std::snprintf(item, sizeof item, "%s%s %.3f", onLine ? " " : "", name.c_str(), ms);
    line += item;
    if (++onLine == 3) {
      ImGui::TextUnformatted(line.c_str());
      line.clear();
      onLine = 0;
    }
  }
  if (!line.empty()) ImGui::TextUnformatted(line.c_str());
}

}  // namespace

// The panel: a strip on the left at the window's full height, scrolling when its open sections
// are taller than the window. Timing comes first, so it is never the part cut off.
void Viewer::drawPanel() {
  if (!showPanel) return;
  const ImVec2 display = ImGui::GetIO().DisplaySize;
  const float scale = ImGui::GetIO().DisplayFramebufferScale.x > 0 ? ImGui::GetIO().DisplayFramebufferScale.x : 1.0f;
  ImGui::SetNextWindowPos(ImVec2(0, 0), ImGuiCond_Always);
  ImGui::SetNextWindowSize(ImVec2(float(panelWidth(int(display.x * scale))) / scale, display.y), ImGuiCond_Always);
  ImGui::Begin("Murmuration", nullptr, ImGuiWindowFlags_NoMove | ImGuiWindowFlags_NoResize | ImGuiWindowFlags_NoCollapse);
  ImGui::PushItemWidth(-130);
  if (ImGui::CollapsingHeader("timing", ImGuiTreeNodeFlags_DefaultOpen)) {
    ImGui::Text("step %.3f ms  %.1f steps/s", simMs, stepsPerS);
    ImGui::Text("frame %.3f ms  %.0f FPS", frameMs, fps);
    stageLines(TimedStep{simMs, simProfile});
    ImGui::Text("render %.3f ms (fill + draw + finish)", renderMs);
    ImGui::TextWrapped("%s", engine->deviceName().c_str());
    ImGui::TextWrapped("GL: %s | interop %s%s%s", glRenderer.c_str(), source->interop() ? "on" : "off",
                       source->interop() ? "" : ": ", source->interop() ? "" : source->interopOffReason().c_str());
  }
  if (ImGui::CollapsingHeader("observables", ImGuiTreeNodeFlags_DefaultOpen)) drawObservablesSection();
  if (ImGui::CollapsingHeader("simulation", ImGuiTreeNodeFlags_DefaultOpen)) drawSimulationSection();
  // One header per section of the rule table (core/rule_table.h), its parameters under it.
  std::vector<std::string> sections;
  for (const core::RuleInfo& r : core::ruleTable())
    if (std::find(sections.begin(), sections.end(), r.section) == sections.end()) sections.push_back(r.section);
  for (const std::string& section : sections)
    if (ImGui::CollapsingHeader(section.c_str())) paramWidgets(section);
  if (ImGui::CollapsingHeader("view")) drawViewSection();
  ImGui::PopItemWidth();
  ImGui::End();
}

// The widgets of the parameter-table rows whose key sits directly under `group` ("" for the
// top level, "boids", "gravity"): enums as combos, numbers as sliders over the row's panel
// range. Changes are applied (and validated) before the next step.
void Viewer::paramWidgets(const std::string& group) {
  const std::string lead = group.empty() ? "" : group + ".";
  for (const core::ParamDesc& d : core::paramTable()) {
    const std::string key = d.key;
    if (key.compare(0, lead.size(), lead) != 0 || key.find('.', lead.size()) != std::string::npos) continue;
    const double v = d.get(params);
    if (key == "force") {  // switching the force may switch the scenario too
      int i = static_cast<int>(v);
      if (ImGui::Combo("force (G)", &i, d.spec.names, d.spec.numNames) && i != static_cast<int>(v)) toggleForce();
    } else if (key == "blockSize" && engine->kind() != core::EngineKind::Cuda) {
      ImGui::TextDisabled("block size: none on the CPU engine");
    } else if (key == "cellWidth" && !core::hasCellWidth(params.pipeline, params.force)) {
      const core::Pipeline runs = core::effectivePipeline(params.pipeline, params.force);
      ImGui::TextDisabled("cell width: no boids grid in %s", core::pipelineInfo(runs).name);
    } else if (d.spec.type == core::ValueType::Enum) {
      int i = static_cast<int>(v);
      if (ImGui::Combo(d.label, &i, d.spec.names, d.spec.numNames)) d.set(params, i), paramsDirty = true;
    } else if (d.panelLo == d.panelHi) {
      continue;
    } else if (d.spec.type == core::ValueType::Float) {
      float f = static_cast<float>(v);
      if (ImGui::SliderFloat(d.label, &f, float(d.panelLo), float(d.panelHi), "%.4g",
                             d.panelLog ? ImGuiSliderFlags_Logarithmic : 0))
        d.set(params, f), paramsDirty = true;
    } else {
      // Integers that come in steps (block sizes: whole warps) slide over the step count.
      const int step = d.spec.multipleOf;
      const std::string label = step > 1 ? std::string(d.label) + " / " + std::to_string(step) : d.label;
      int i = static_cast<int>(v) / step;
      if (ImGui::SliderInt(label.c_str(), &i, int(d.panelLo) / step, int(d.panelHi) / step))
        d.set(params, double(i) * step), paramsDirty = true;
    }
  }
}

void Viewer::drawSimulationSection() {
  paramWidgets("");
  // N as text: "250k" and "1M" work as on the command line, Enter applies, and a value out of
  // range is refused with the command line's message instead of wrapping.
  if (nText.empty()) nText = std::to_string(scenario.n);
  char nBuf[32];
  std::snprintf(nBuf, sizeof nBuf, "%s", nText.c_str());
  const bool nEntered = ImGui::InputText("N (Enter)", nBuf, sizeof nBuf, ImGuiInputTextFlags_EnterReturnsTrue);
  nText = nBuf;
  int scen = -1;
  const auto& names = core::scenarioNames();
  for (size_t i = 0; i < names.size(); ++i)
    if (names[i] == scenario.name) scen = static_cast<int>(i);
  std::vector<const char*> scenNames;
  for (const auto& name : names) scenNames.push_back(name.c_str());
  const bool scenChanged = ImGui::Combo("scenario", &scen, scenNames.data(), static_cast<int>(scenNames.size()));
  // --dims: the plane or the cube, a new world either way (the scenario is built again in it).
  bool plane = params.dims == 2;
  const bool planeChanged = ImGui::Checkbox("2D: the plane z = 0", &plane);
  const bool resetClicked = ImGui::Button("reset (R)");
  if (nEntered || scenChanged || resetClicked || planeChanged) {
    try {
      const size_t n = static_cast<size_t>(parseCount("N", nText, 1, core::kMaxBodies));
      if (planeChanged) {
        params.dims = plane ? 2 : 3;
        paramsDirty = true;
      }
      if (scenChanged && scen >= 0) {
        scenario.name = names[static_cast<size_t>(scen)];
        params.force = core::naturalForce(scenario.name);
        paramsDirty = true;
      }
      scenario.n = n;
      resetPending = true;
    } catch (const std::exception& e) {
      say(e.what(), true);
    }
  }
  ImGui::SameLine();
  if (ImGui::Button(paused ? "run (Space)" : "pause (Space)")) paused = !paused;
  ImGui::SameLine();
  if (ImGui::Button("step (N)")) stepOnce = true;
  // The parameters as the JSON that --params reads.
  char pathBuf[512];
  std::snprintf(pathBuf, sizeof pathBuf, "%s", paramsPath.c_str());
  if (ImGui::InputText("params file", pathBuf, sizeof pathBuf)) paramsPath = pathBuf;
  if (ImGui::Button("save params")) saveParams();
  ImGui::SameLine();
  if (ImGui::Button("load params")) loadParams();
}

void Viewer::saveParams() {
  try {
    std::ofstream out(paramsPath);
    out << paramsToJson(params) << "\n";
    out.close();
    if (!out) throw std::runtime_error("cannot write " + paramsPath);
    say("params saved: " + paramsPath + " (murmur --params " + paramsPath + ")");
  } catch (const std::exception& e) {
    say(e.what(), true);
  }
}

void Viewer::loadParams() {
  try {
    core::SimParams p = params;
    loadParamsFile(paramsPath, p);
    params = p;
    paramsDirty = true;
    say("params loaded: " + paramsPath);
  } catch (const std::exception& e) {
    say(e.what(), true);
  }
}

void Viewer::drawViewSection() {
  int d = static_cast<int>(style.draw), c = static_cast<int>(style.colour);
  if (ImGui::Combo("draw (D)", &d, "oriented boids\0points\0sprites\0splat\0"))
    style.draw = static_cast<render::DrawMode>(d), drawChosen = true;
  if (ImGui::Combo("colour (C)", &c, "velocity\0speed\0id\0")) {
    style.colour = static_cast<render::ColourMode>(c);
    speedFitTime = Clock::time_point{};
  }
  // One size per draw mode, the one it draws with (render/renderer.h DrawMode): points are pixels
  // wide, boids and sprites world units (points' pixel size is their smallest on screen), splats
  // their own world size.
  const bool points = style.draw == render::DrawMode::Points;
  if (points || !splat()) ImGui::SliderFloat(points ? "size (px)" : "min size (px)", &style.pointSize, 1.0f, 32.0f);
  if (!points && !splat())
    ImGui::SliderFloat("size", &style.bodySize, style.worldRadius * 1e-4f, style.worldRadius * 0.05f, "%.3f",
                       ImGuiSliderFlags_Logarithmic);
  if (ImGui::Checkbox("vsync (V)", &vsync)) glfwSwapInterval(vsync ? 1 : 0);
  if (style.boxHalfSize > 0) {
    ImGui::Checkbox("world box", &style.box);
    ImGui::SameLine();
  }
  ImGui::Checkbox("legend", &style.legend);
  // Depth cue in every mode: the far side of the scene fades by this much.
  ImGui::SliderFloat("fog", &style.splat.fogStrength, 0.0f, 1.0f);
  if (!splat()) return;
  // Splat: the slab cuts a thin layer out of the volume, where flocks and the space between them
  // show; eye-dome lighting (and the fog above) give depth to what is left.
  render::SplatStyle& sp = style.splat;
  bool slab = sp.slabHalfWidth > 0;
  if (ImGui::Checkbox("slab (X)", &slab)) sp.slabHalfWidth = slab ? 0.1f * style.worldRadius : 0.0f;
  if (slab) {
    ImGui::SliderFloat("slab half-width", &sp.slabHalfWidth, style.worldRadius * 0.005f, style.worldRadius, "%.2f",
                       ImGuiSliderFlags_Logarithmic);
    ImGui::SliderFloat("slab offset", &sp.slabOffset, -style.worldRadius, style.worldRadius, "%.1f");
  }
  ImGui::SliderFloat("eye-dome light", &sp.edlStrength, 0.0f, 4.0f);
  ImGui::SliderFloat("size", &sp.bodySize, style.worldRadius * 1e-4f, style.worldRadius * 0.05f, "%.3f",
                     ImGuiSliderFlags_Logarithmic);
}

// The last sample's values and the recent history of the plotted one (docs/observables.md).
void Viewer::drawObservablesSection() {
  ImGui::Checkbox("observe", &observing);
  ImGui::SameLine();
  ImGui::Text("every %d steps, %.2f ms", opts.observeEvery, observeMs);
  if (!observedOnce) return;
  using core::Obs;
  const core::Observables& o = obsLast;
  if (core::runsLocalRule(params)) {
    ImGui::Text("polarization %.3f  speed %.3f", o[Obs::Polarization], o[Obs::MeanSpeed]);
    ImGui::Text("neighbours %.2f  nearest %.3f", o[Obs::NeighboursCohesion], o[Obs::NearestDistance]);
    if (o.has(Obs::Flocks))
      ImGui::Text("flocks %.0f  largest %.1f%%  milling %.2f", o[Obs::Flocks], 100.0 * o[Obs::LargestFlockShare],
                  o[Obs::Milling]);
    else
      ImGui::TextDisabled("flocks: --observables-flocks");
  } else {
    ImGui::Text("K %.5g  W %.5g", o[Obs::Kinetic], o[Obs::Potential]);
    ImGui::Text("E %.6g  drift %.2e", o[Obs::TotalEnergy], o[Obs::EnergyDrift]);
    ImGui::Text("2K/|W| %.3f  r50 %.3f", o[Obs::VirialRatio], o[Obs::Lagrange50]);
  }
  if (!obsHistory.empty()) {
    char label[64];
    std::snprintf(label, sizeof label, "%s", plottedName());
    ImGui::PlotLines("##history", obsHistory.data(), int(obsHistory.size()), 0, label, FLT_MAX, FLT_MAX,
                     ImVec2(ImGui::GetContentRegionAvail().x, 60));
  }
}

// The HUD sits at the top of the view area, right of the panel, with the last message (paths
// written, errors) under it where it is read.
void Viewer::drawHud() {
  const ImGuiIO& io = ImGui::GetIO();
  const float scale = io.DisplayFramebufferScale.x > 0 ? io.DisplayFramebufferScale.x : 1.0f;
  const float left = float(panelWidth(int(io.DisplaySize.x * scale))) / scale;
  ImGui::SetNextWindowPos(ImVec2(left + 8, 8));
  ImGui::SetNextWindowBgAlpha(0.45f);
  ImGui::Begin("hud", nullptr,
               ImGuiWindowFlags_NoDecoration | ImGuiWindowFlags_AlwaysAutoResize | ImGuiWindowFlags_NoSavedSettings |
                   ImGuiWindowFlags_NoFocusOnAppearing | ImGuiWindowFlags_NoNav | ImGuiWindowFlags_NoInputs);
  char observed[64] = "";
  if (observing && observedOnce && !std::isnan(plottedValue(obsLast)))
    std::snprintf(observed, sizeof observed, " | %s %.4g", plottedName(), plottedValue(obsLast));
  const std::string runs = runDescription(scenario, engine->numBodies(), params, render::toString(style.draw),
                                          render::toString(style.colour), stepsDone);
  ImGui::Text("%s | step %.2f ms (%.1f/s) | frame %.2f ms (%.0f FPS) | interop %s%s%s%s%s%s", runs.c_str(), simMs, stepsPerS,
              frameMs, fps, source->interop() ? "on" : "off", observed, paused ? " | paused" : "",
              stepper.busy() && simMs > frameMs ? " | stepping" : "", fpsLog ? " | REC fps" : "",
              video ? " | REC video" : "");
  if (!message.empty() && msBetween(messageTime, Clock::now()) < (messageIsError ? 10000 : 6000)) {
    if (messageIsError)
      ImGui::TextColored(ImVec4(1.0f, 0.45f, 0.4f, 1.0f), "%s", message.c_str());
    else
      ImGui::Text("%s", message.c_str());
  }
  ImGui::End();
  if (showHelp) {
    ImGui::SetNextWindowPos(ImVec2(left + (io.DisplaySize.x - left) * 0.5f, io.DisplaySize.y * 0.5f),
                            ImGuiCond_Always, ImVec2(0.5f, 0.5f));
    ImGui::Begin("keys (H)", &showHelp, ImGuiWindowFlags_AlwaysAutoResize);
    for (const auto& k : helpRows()) ImGui::Text("%-10s %s", k.first.c_str(), k.second.c_str());
    ImGui::End();
  }
}

}  // namespace murmur::app::viewer
