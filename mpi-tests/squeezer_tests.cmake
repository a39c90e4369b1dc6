# Andrews' squeezing mechanism (issue 36; configs/squeezer.cfg, docs/seeds.md "Andrews'
# squeezer"): check, accel at t = 0 and at the published state at t = 0.03, and a dp5 run to
# t = 0.03 against the Bari test set's published data (about 2 s)
find_program(MBS_SQUEEZER_PY NAMES python3 PATHS /usr/bin NO_DEFAULT_PATH)
if(NOT MBS_SQUEEZER_PY)
  find_program(MBS_SQUEEZER_PY NAMES python3)
endif()
if(TARGET mbspar AND MBS_SQUEEZER_PY)
  add_test(NAME squeezer COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/squeezer.sh $<TARGET_FILE:mbspar>
                                 ${CMAKE_SOURCE_DIR}/configs ${MBS_SQUEEZER_PY})
  set_tests_properties(squeezer PROPERTIES LABELS unit TIMEOUT 120 PROCESSORS 1
                       ENVIRONMENT "${MBS_MPI_ENV};OMPI_MCA_orte_execute_quiet=1")
endif()
